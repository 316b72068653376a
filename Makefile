# Two commands on a fresh machine with python3 and git: `make demo`, `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
REPO   ?= $(CURDIR)
QUESTION ?= How are secrets such as AWS keys or private keys redacted before code is indexed?
# make demo keeps its index inside the checkout, never in the user's own ~/.codecite.
DEMO_HOME ?= $(CURDIR)/.codecite
# This checkout is indexed as `codecite` (not after the folder it was cloned into).
DEMO_NAME := $(if $(filter $(CURDIR),$(abspath $(REPO))),--name codecite)
# The demo's storage is its own even where the shell points codecite elsewhere.
DEMO_ENV  := env -u CODECITE_DATABASE_URL -u DATABASE_URL -u CODECITE_INDEX -u CODECITE_CONFIG \
	CODECITE_HOME="$(DEMO_HOME)"
LOCK_VENV := .venv-lock

.PHONY: demo test lint typecheck imports unit lock lock-upgrade lockcheck bench-venv clean venv dev

# Every venv holds exactly the locked set (requirements/*.txt, exported from uv.lock), put there
# by the script the Dockerfile and CI install with too.
$(BIN)/.installed: pyproject.toml requirements/app.txt scripts/install.sh
	PYTHON=$(PYTHON) EDITABLE=1 sh scripts/install.sh all $(VENV) app
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed requirements/dev.txt
	PYTHON=$(PYTHON) sh scripts/install.sh deps $(VENV) dev
	touch $@

$(LOCK_VENV)/bin/uv: requirements/uv.txt scripts/install.sh
	PYTHON=$(PYTHON) sh scripts/install.sh deps $(LOCK_VENV) uv
	touch $@

venv: $(BIN)/.installed
dev: $(BIN)/.installed-dev

demo: $(BIN)/.installed
	@echo "codecite demo: data directory $(DEMO_HOME) (CODECITE_HOME; delete it to start over)"
	$(DEMO_ENV) $(BIN)/codecite index "$(REPO)" $(DEMO_NAME)
	printf '%s\n' "$(QUESTION)" | $(DEMO_ENV) $(BIN)/codecite chat

# After pyproject.toml changes (a dependency added, branches merged): resolve again, keeping
# every pin that still fits, and export requirements/*.txt. Commit what it writes.
lock: $(LOCK_VENV)/bin/uv
	PYTHON=$(PYTHON) LOCK_VENV=$(LOCK_VENV) sh scripts/lock.sh update

# The same, taking the newest release of everything pyproject.toml allows.
lock-upgrade: $(LOCK_VENV)/bin/uv
	PYTHON=$(PYTHON) LOCK_VENV=$(LOCK_VENV) sh scripts/lock.sh upgrade

# uv.lock and requirements/*.txt in step with pyproject.toml (offline).
lockcheck: $(LOCK_VENV)/bin/uv
	PYTHON=$(PYTHON) LOCK_VENV=$(LOCK_VENV) sh scripts/lock.sh check

lint: $(BIN)/.installed-dev
	$(BIN)/ruff check bot adapters tests bench
	$(BIN)/ruff format --check bot adapters tests bench

typecheck: $(BIN)/.installed-dev
	$(BIN)/mypy

# The design's layer rules (contracts in pyproject.toml).
imports: $(BIN)/.installed-dev
	$(BIN)/lint-imports

# Four workers: most tests wait on local servers and subprocesses, not on the CPU. The lock
# tool is there for the tests of the lock check itself.
unit: $(BIN)/.installed-dev $(LOCK_VENV)/bin/uv
	$(BIN)/python -m pytest -n 4

test: lockcheck lint typecheck imports unit

# The peer for side-by-side benchmarks lives in its own venv (see bench/README.md), locked too.
bench-venv: .venv-bench/bin/.installed

.venv-bench/bin/.installed: pyproject.toml requirements/bench.txt scripts/install.sh
	PYTHON=$(PYTHON) EDITABLE=1 sh scripts/install.sh all .venv-bench bench
	touch $@

clean:
	rm -rf $(VENV) $(LOCK_VENV) .mypy_cache .ruff_cache .pytest_cache
