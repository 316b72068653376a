#!/bin/sh
# The lock: one resolution of pyproject.toml, in the two forms installers read.
#
#   uv.lock                what the Python buildpack installs (`uv sync --locked`, beside
#                          .python-version); the only package manager file at the top level
#   requirements/app.txt   its runtime set plus the build tool, hash-pinned for pip
#                          (scripts/install.sh: the image, `make demo`)
#   requirements/dev.txt   the same plus the dev extra (`make dev`, `make test`, CI)
#   requirements/bench.txt the same plus the bench extra: the peers bench/ runs beside
#   requirements/uv.txt    the uv that writes and checks all of them (this script's tool)
#
#   scripts/lock.sh update   re-resolve after pyproject.toml changed, keeping every pin that
#                            still fits, and export the requirements files (`make lock`)
#   scripts/lock.sh upgrade  the same, taking the newest release of everything
#   scripts/lock.sh check    exit 1 with one line when any file is out of step (`make test`);
#                            offline: it reads no index and needs no cache
#
# uv runs from its own venv (LOCK_VENV, default .venv-lock), installed from requirements/uv.txt,
# so a stale lock never stands in the way of the command that refreshes it.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
step=${1:?usage: scripts/lock.sh update|upgrade|check}
tool=${LOCK_VENV:-$root/.venv-lock}
uv=$tool/bin/uv
cd "$root"

if [ ! -x "$uv" ]; then
    sh scripts/install.sh deps "$tool" uv
fi
# Never a Python of uv's own: the machine's interpreter is the one the lock is checked with.
export UV_PYTHON_DOWNLOADS=never UV_NO_PROGRESS=1
export UV_PYTHON="${PYTHON:-python3}"

# name -> what `uv export` puts in requirements/NAME.txt
sets="app dev bench uv"
export_args() {
    case $1 in
        app) echo "--group build" ;;
        dev) echo "--extra dev --group build" ;;
        bench) echo "--extra bench --group build" ;;
        uv) echo "--only-group lock" ;;
    esac
}

render() {
    echo "# Exported from uv.lock by scripts/lock.sh: edit pyproject.toml, then run \`make lock\`."
    # shellcheck disable=SC2046 # the arguments are words by design
    "$uv" export --frozen --quiet --no-emit-project --format requirements-txt $(export_args "$1")
}

scratch=$(mktemp)
trap 'rm -f "$scratch"' EXIT

case $step in
    update | upgrade)
        if [ "$step" = upgrade ]; then "$uv" lock --quiet --upgrade; else "$uv" lock --quiet; fi
        mkdir -p requirements
        for name in $sets; do # rewritten only when changed: make's venvs depend on them
            render "$name" >"$scratch"
            cmp -s "$scratch" "requirements/$name.txt" || cp "$scratch" "requirements/$name.txt"
        done
        echo "lock: uv.lock and requirements/{$(echo "$sets" | tr ' ' ',')}.txt written"
        ;;
    check)
        if ! "$uv" lock --check --offline --quiet >/dev/null 2>&1; then
            echo "uv.lock is out of step with pyproject.toml: run \`make lock\` and commit the result" >&2
            exit 1
        fi
        for name in $sets; do
            render "$name" >"$scratch"
            if ! cmp -s "$scratch" "requirements/$name.txt"; then
                echo "requirements/$name.txt is out of step with uv.lock: run \`make lock\` and commit the result" >&2
                exit 1
            fi
        done
        ;;
    *)
        echo "unknown step: $step (update, upgrade or check)" >&2
        exit 2
        ;;
esac
