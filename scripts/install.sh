#!/bin/sh
# Install codecite into a virtual environment: the one install path for `make`, CI and the
# Dockerfile. It installs exactly the locked set (requirements/*.txt, exported from uv.lock by
# `make lock`), every file checked against its hash, and never upgrades anything on its own.
# Two steps, so that a container build caches the first (it changes only when the lock does):
#
#   scripts/install.sh deps VENV [SET]   the locked set requirements/SET.txt: app (default:
#                                        what codecite runs on, and the setuptools it is built
#                                        with), dev (app + the dev tools), bench (app + the
#                                        peers bench/ measures against) or uv (the lock tool)
#   scripts/install.sh app VENV          codecite itself from this checkout, without
#                                        dependencies or build isolation, then a smoke check
#   scripts/install.sh all VENV [SET]    both
#
# PYTHON picks the interpreter that creates VENV (default python3); EDITABLE=1 installs the
# checkout in place (development).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/install.sh deps|app|all VENV [app|dev|bench|uv]"
step=${1:?$usage}
case $step in
    deps | app | all) ;;
    *)
        echo "unknown step: $step (deps, app or all)" >&2
        exit 2
        ;;
esac
venv=${2:?$usage}
locked=$root/requirements/${3:-app}.txt
if [ "$step" != app ] && [ ! -f "$locked" ]; then
    echo "no locked set $locked (app, dev, bench or uv)" >&2
    exit 2
fi

[ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
pip() { "$venv/bin/python" -m pip --quiet --disable-pip-version-check --no-input "$@"; }

case $step in
    deps | all) pip install --require-hashes -r "$locked" ;;
esac

case $step in
    app | all)
        # setuptools comes from the locked set, so the build is as pinned as the rest.
        if [ "${EDITABLE:-0}" = 1 ]; then
            pip install --no-deps --no-build-isolation -e "$root"
        else
            pip install --no-deps --no-build-isolation "$root"
        fi
        "$venv/bin/codecite" --help >/dev/null
        ;;
esac
