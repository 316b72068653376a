# codecite in one image; each process of the Procfile is a `command` (see docker-compose.yml).
#   docker build -t codecite .
#   docker run --rm --init -e PORT=8080 -p 8080:8080 -e SLACK_BOT_TOKEN=... -e SLACK_APP_TOKEN=... \
#     -v codecite-data:/data codecite codecite serve --slack --no-schedule
# BASE is any Debian-like image with python3 (3.11+) and its venv module: the registry's
# python:3.11-slim by default, or a local one where no registry can be reached
# (`scripts/docker-base.sh codecite-base` makes one with debootstrap; CI builds with it).
ARG BASE=python:3.11-slim

# The system codecite runs on: git (it fetches and reads the repositories it indexes) and CA
# certificates, the unprivileged user, and nothing a server never reads: documentation,
# manuals, translations, package lists, and Perl (about 55 MB), which Debian's git depends on
# only for commands codecite never runs (send-email, svn, cvs, instaweb).
FROM ${BASE} AS system
RUN set -eu; \
    if ! command -v git >/dev/null || [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then \
        apt-get update; \
        apt-get install -y --no-install-recommends git ca-certificates; \
    fi; \
    perl=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' perl perl-modules-5.36 \
        libperl5.36 liberror-perl 2>/dev/null | awk '$1 == "ii" { print $2 }'); \
    [ -z "$perl" ] || dpkg --purge --force-depends $perl; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
        /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/*; \
    useradd --create-home --uid 10001 --shell /usr/sbin/nologin codecite; \
    mkdir /data; \
    chown codecite:codecite /data

# The venv, built from the lock (scripts/install.sh: the same script `make` and CI use).
FROM system AS build
ENV PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# The locked set first, in a layer of its own: rebuilt only when the lock changes.
COPY requirements/app.txt requirements/app.txt
COPY scripts/install.sh scripts/install.sh
RUN sh scripts/install.sh deps /opt/venv
COPY pyproject.toml README.md ./
COPY bot bot
COPY adapters adapters
# Then codecite itself; the installers and numpy's own test suite stay behind.
RUN sh scripts/install.sh app /opt/venv \
    && /opt/venv/bin/python -m pip uninstall --quiet --yes pip setuptools \
    && find /opt/venv -depth -type d -path '*/numpy/*' -name tests -exec rm -rf {} +

# What runs: the system and the venv, flattened into one layer set (nothing of the build).
FROM scratch
COPY --from=system / /
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    CODECITE_HOME=/data
# CODECITE_HOME holds the local index, clones and (without a database URL) the state files.
USER codecite
WORKDIR /home/codecite
VOLUME /data
EXPOSE 8080

# The web process; docker-compose.yml (or the platform) picks the process per container.
CMD ["codecite", "serve", "--no-schedule"]
