#!/bin/sh
# A base image for the Dockerfile where no registry can be reached: Debian bookworm (its python3
# is 3.11, as .python-version asks) made with debootstrap from the Debian mirror apt already
# uses, with this machine's CA bundle (so pip inside the build trusts what this machine
# trusts), imported into the container daemon as NAME.
#
#   scripts/docker-base.sh NAME
#   docker build --network host --build-arg BASE=NAME -t codecite .
#
# Needs root, debootstrap and a running daemon (docker, DOCKER_HOST honoured). WORK (default a
# new temporary directory, removed afterwards) holds the root file system while it is made.
set -eu

name=${1:?usage: scripts/docker-base.sh NAME}
suite=bookworm
packages=python3,python3-venv,git,ca-certificates

# The mirror apt uses for the suite: deb822 sources (URIs/Suites) or one-line sources.
mirror() {
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '
            /^URIs:/ { uri = $2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite && uri != "") { print uri; exit } }
            /^$/ { uri = "" }' "$file"
    done
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '$1 == "deb" && $3 == suite { print $2; exit }' "$file"
    done
    echo "http://deb.debian.org/debian"
}
url=$(mirror | head -n 1)

made_work=""
if [ -z "${WORK:-}" ]; then
    WORK=$(mktemp -d)
    made_work=$WORK
fi
rootfs=$WORK/rootfs
cleanup() { [ -z "$made_work" ] || rm -rf "$made_work"; }
trap cleanup EXIT

if ! debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$url" \
    >"$WORK/debootstrap.log" 2>&1; then
    echo "docker-base: debootstrap of $suite from $url failed:" >&2
    tail -n 5 "$WORK/debootstrap.log" >&2
    exit 1
fi
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import - "$name" >/dev/null
echo "docker-base: $name ($suite from $url, with this machine's CA bundle)"
