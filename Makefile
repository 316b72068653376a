# Two commands on a fresh machine with python3 and git: `make demo`, `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
REPO   ?= $(CURDIR)
QUESTION ?= How are secrets such as AWS keys or private keys redacted before code is indexed?

.PHONY: demo test lint typecheck imports unit bench-venv clean venv dev

# The same script installs the Docker image's venv (see Dockerfile), so CI runs it too.
$(BIN)/.installed: pyproject.toml scripts/install.sh
	PYTHON=$(PYTHON) EDITABLE=1 sh scripts/install.sh all $(VENV)
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed
	PYTHON=$(PYTHON) EDITABLE=1 EXTRAS=dev sh scripts/install.sh app $(VENV)
	touch $@

venv: $(BIN)/.installed
dev: $(BIN)/.installed-dev

demo: $(BIN)/.installed
	$(BIN)/codecite index "$(REPO)"
	printf '%s\n' "$(QUESTION)" | $(BIN)/codecite chat

lint: $(BIN)/.installed-dev
	$(BIN)/ruff check bot adapters tests bench
	$(BIN)/ruff format --check bot adapters tests bench

typecheck: $(BIN)/.installed-dev
	$(BIN)/mypy

# The design's layer rules (contracts in pyproject.toml).
imports: $(BIN)/.installed-dev
	$(BIN)/lint-imports

# Four workers: most tests wait on local servers and subprocesses, not on the CPU.
unit: $(BIN)/.installed-dev
	$(BIN)/python -m pytest -n 4

test: lint typecheck imports unit

# The peer for side-by-side benchmarks lives in its own venv (see bench/README.md).
bench-venv: .venv-bench/bin/.installed

.venv-bench/bin/.installed: pyproject.toml
	$(PYTHON) -m venv .venv-bench
	.venv-bench/bin/python -m pip install --quiet --upgrade pip
	.venv-bench/bin/python -m pip install --quiet -e '.[bench]'
	touch $@

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
