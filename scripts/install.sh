#!/bin/sh
# Install codecite into a virtual environment: the one install path for `make`, CI and the
# Dockerfile. Two steps, so that a container build caches the first (it changes only when
# pyproject.toml does):
#
#   scripts/install.sh deps VENV     the runtime dependencies listed in pyproject.toml
#   scripts/install.sh app VENV      codecite itself (no dependencies), then a smoke check
#   scripts/install.sh all VENV      both
#   scripts/install.sh print-deps    the dependencies, one a line (what `deps` installs)
#
# PYTHON picks the interpreter that creates VENV (default python3); EDITABLE=1 installs the
# checkout in place (development); EXTRAS=dev adds optional dependencies to the app step.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
step=${1:?usage: scripts/install.sh deps|app|all|print-deps [VENV]}
python=${PYTHON:-python3}

print_deps() {
    "$1" - "$root/pyproject.toml" <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as handle:
    print("\n".join(tomllib.load(handle)["project"]["dependencies"]))
PY
}

if [ "$step" = print-deps ]; then
    print_deps "$python"
    exit 0
fi

case $step in
    deps | app | all) ;;
    *)
        echo "unknown step: $step (deps, app, all or print-deps)" >&2
        exit 2
        ;;
esac

venv=${2:?usage: scripts/install.sh $step VENV}
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip() { "$venv/bin/python" -m pip --quiet --disable-pip-version-check --no-input "$@"; }

case $step in
    deps | all)
        pip install --upgrade pip
        requirements="$venv/codecite-requirements.txt"
        print_deps "$venv/bin/python" >"$requirements"
        pip install -r "$requirements"
        ;;
esac

case $step in
    app | all)
        target=$root
        [ -z "${EXTRAS:-}" ] || target="$root[$EXTRAS]"
        if [ "${EDITABLE:-0}" = 1 ]; then
            pip install -e "$target"
        elif [ -n "${EXTRAS:-}" ]; then
            pip install "$target"
        else
            pip install --no-deps "$target"
        fi
        "$venv/bin/codecite" --help >/dev/null
        ;;
esac
