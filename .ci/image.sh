#!/usr/bin/env bash
# The image in CI, sourced by .ci/run: a container daemon of this run's own, a base image,
# codecite's image and PostgreSQL's, then tests/container/ against them.
#
#   image_prepare   validate docker-compose.yml; start dockerd (its files, socket and pid
#                   under IMAGE_WORK); pull the registry's base or make one with debootstrap
#                   (scripts/docker-base.sh); build both images. Exits IMAGE_SKIPPED, with the
#                   reason, only when the daemon cannot start.
#   image_check     the container tests, with the images' tags in their environment
#   image_cleanup   stop what image_prepare started (by pid) and remove IMAGE_WORK
#
# The base is made once per run and used for both images; nothing is kept between runs (the
# daemon's data directory is IMAGE_WORK's and goes with it).

IMAGE_WORK=$(mktemp -d /tmp/codecite-ci-image.XXXXXX)
IMAGE_SKIPPED=3
IMAGE=codecite:ci
POSTGRES_IMAGE=codecite-postgres:ci
REGISTRY_BASE=python:3.11-slim
export IMAGE_WORK DOCKER_HOST="unix://$IMAGE_WORK/docker.sock"

image_compose() {
    if docker compose version >/dev/null 2>&1; then docker compose "$@"; else docker-compose "$@"; fi
}

_elapsed() { echo "$(($(date +%s) - $1)) s"; }

image_prepare() (
    set -euo pipefail
    t0=$(date +%s)
    # Compose's own reading of the file (no daemon needed), and its refusal without a password.
    POSTGRES_PASSWORD=ci image_compose --file docker-compose.yml config --quiet
    if (unset POSTGRES_PASSWORD && image_compose --file docker-compose.yml config --quiet) \
        >/dev/null 2>&1; then
        echo "image: docker-compose.yml starts without POSTGRES_PASSWORD" >&2
        exit 1
    fi
    echo "image: docker-compose.yml is valid ($(image_compose version --short 2>/dev/null))"

    mkdir -p "$IMAGE_WORK/data" "$IMAGE_WORK/exec"
    dockerd --data-root "$IMAGE_WORK/data" --exec-root "$IMAGE_WORK/exec" \
        --pidfile "$IMAGE_WORK/dockerd.pid" --host "$DOCKER_HOST" \
        --bridge=none --iptables=false --ip-masq=false >"$IMAGE_WORK/dockerd.log" 2>&1 &
    for _ in $(seq 120); do
        docker info >/dev/null 2>&1 && break
        if ! kill -0 $! 2>/dev/null; then break; fi
        sleep 0.5
    done
    if ! docker info >/dev/null 2>&1; then
        echo "image: skipped, the container daemon could not start here:"
        tail -n 3 "$IMAGE_WORK/dockerd.log"
        exit "$IMAGE_SKIPPED"
    fi
    echo "image: dockerd $(docker version --format '{{.Server.Version}}') up in $(_elapsed "$t0")"

    t1=$(date +%s)
    if timeout 60 docker pull --quiet "$REGISTRY_BASE" >/dev/null 2>&1; then
        base=$REGISTRY_BASE
    else
        base=codecite-base:ci
        WORK=$IMAGE_WORK sh scripts/docker-base.sh "$base"
    fi
    echo "image: base $base ready in $(_elapsed "$t1")"

    # Both images at once: one waits on PyPI, the other on the Debian mirror.
    t2=$(date +%s)
    docker build --quiet --network host --build-arg "BASE=$base" --tag "$POSTGRES_IMAGE" \
        .ci/postgres >"$IMAGE_WORK/postgres-build.log" 2>&1 &
    postgres=$!
    docker build --quiet --network host --build-arg "BASE=$base" --tag "$IMAGE" . >/dev/null
    size=$(docker image inspect --format '{{.Size}}' "$IMAGE")
    echo "image: $IMAGE built in $(_elapsed "$t2"), $((size / 1000000)) MB"
    if ! wait "$postgres"; then
        cat "$IMAGE_WORK/postgres-build.log" >&2
        exit 1
    fi
    echo "image: $POSTGRES_IMAGE built in $(_elapsed "$t2"); prepared in $(_elapsed "$t0")"
)

image_check() {
    local t0
    t0=$(date +%s)
    CODECITE_TEST_IMAGE=$IMAGE CODECITE_TEST_POSTGRES_IMAGE=$POSTGRES_IMAGE \
        .venv/bin/python -m pytest tests/container -n 2
    echo "image: tests/container took $(_elapsed "$t0")"
}

image_cleanup() {
    local status=$? pid
    if [ -n "${preparing:-}" ] && kill -0 "$preparing" 2>/dev/null; then
        kill -- "-$preparing" 2>/dev/null || true # its process group: debootstrap, builds
        wait "$preparing" 2>/dev/null || true
    fi
    if [ -s "$IMAGE_WORK/dockerd.pid" ]; then
        pid=$(cat "$IMAGE_WORK/dockerd.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 60); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    # Whatever the daemon left mounted under its directory, innermost first.
    awk -v work="$IMAGE_WORK" 'index($2, work) == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
    rm -rf "$IMAGE_WORK"
    return "$status"
}
