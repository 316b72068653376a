# codecite in one image; each process of the Procfile is a `command` (see docker-compose.yml).
#   docker build -t codecite .
#   docker run --rm --init -e PORT=8080 -p 8080:8080 -e SLACK_BOT_TOKEN=... -e SLACK_APP_TOKEN=... \
#     -v codecite-data:/data codecite codecite serve --slack --no-schedule
# BASE is any Debian-like image with python3 (3.11+) and its venv module: the registry's
# python:3.11-slim by default, or a local one where no registry can be reached
# (`scripts/docker-base.sh codecite-base` makes one with debootstrap; CI builds with it).
ARG BASE=python:3.11-slim

# The system codecite runs on: git (it fetches and reads the repositories it indexes) and CA
# certificates, the unprivileged user, and nothing a server never reads (each cut below is of
# files no codecite process opens, runs or links; tests/container runs every path that loads a
# library, scripts/image_paths.py):
# - documentation, manuals, translations, package lists, and Perl (about 65 MB with
#   perl-base), which Debian's git depends on only for commands codecite never runs
#   (send-email, svn, cvs, instaweb, add--interactive, whose builtin replaced it in 2.37);
#   debconf is Perl too: add a system package to the apt-get install below, before the purge;
# - git's programs for serving, pushing and mailing (daemon, http-backend, http-push,
#   imap-send, shell, scalar) and the translation helper of its shell-scripted commands: codecite
#   only clones, fetches and reads (bot/ingest/git.py); git-remote-http and http-fetch stay.
#   /usr/lib/git-core/git is a second copy of /usr/bin/git: made a hard link (same bytes);
FROM ${BASE} AS system
RUN set -eu; \
    if ! command -v git >/dev/null || [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then \
        apt-get update; \
        apt-get install -y --no-install-recommends git ca-certificates; \
    fi; \
    perl=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' perl perl-modules-5.36 \
        libperl5.36 liberror-perl perl-base 2>/dev/null | awk '$1 == "ii" { print $2 }'); \
    [ -z "$perl" ] || dpkg --purge --force-depends --force-remove-essential $perl; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
        /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/*; \
    core=/usr/lib/git-core; \
    rm -f /usr/bin/scalar /usr/bin/git-shell $core/scalar $core/git-shell $core/git-daemon \
        $core/git-http-backend $core/git-http-push $core/git-imap-send \
        $core/git-sh-i18n--envsubst; \
    ln -f /usr/bin/git $core/git; \
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
# Then codecite itself, and the venv without what no process reads:
# - the installers (pip, setuptools), numpy's own tests, f2py (a Fortran wrapper generator)
#   and C headers, and typing stubs (.pyi: read by type checkers, never by Python);
# - Kingfisher's THIRD_PARTY_NOTICES (7.6 MB: the full text of each licence repeated for each
#   of its 774 crates) gzipped beside its other licence files: every text stays, 0.3 MB.
RUN set -eu; \
    sh scripts/install.sh app /opt/venv; \
    /opt/venv/bin/python -m pip uninstall --quiet --yes pip setuptools; \
    site=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
    find $site -depth -type d -path '*/numpy/*' -name tests -exec rm -rf {} +; \
    rm -rf $site/numpy/f2py $site/numpy/_core/include $site/numpy/_pyinstaller; \
    find $site -name '*.pyi' -delete; \
    gzip -9 $site/kingfisher_secret_scanner-*.dist-info/licenses/THIRD_PARTY_NOTICES
# Bytecode for what the processes import, and none for what they never do (27 of the 57 MB
# that pip and Debian compile stay): every .pyc goes, then codecite's paths run once with bytecode
# writing on, so Python writes one for each module they load. scripts/image_paths.py imports
# every module of bot and adapters and runs each library path (a diagram, a Kingfisher scan,
# psycopg, metrics, the OpenAI client), the CLI indexes, answers and searches a repository,
# and `serve` answers /healthz, /readyz and /metrics. A module none of these loads still
# imports (compiled in memory, as with PYTHONDONTWRITEBYTECODE); start-up is measured in
# bench/README.md. Nothing of the build stays: /src and the warm-up's files go, and so do the
# stdlib's parts no process imports, now that the venv is made (ensurepip and its wheels,
# lib2to3, pydoc's topics, distutils, the regression-test package).
COPY scripts/image_paths.py scripts/image_paths.py
RUN set -eu; \
    stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'); \
    rm -rf $stdlib/ensurepip $stdlib/lib2to3 $stdlib/pydoc_data $stdlib/distutils \
        $stdlib/test /usr/share/python-wheels; \
    find /opt/venv $stdlib -name __pycache__ -type d -prune -exec rm -rf {} +; \
    PYTHONDONTWRITEBYTECODE= PATH=/opt/venv/bin:$PATH python scripts/image_paths.py; \
    rm -rf /src /tmp/* /root/.cache

# What runs: the system and the venv, flattened into one layer (nothing of the build stays).
FROM scratch
COPY --from=build / /
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
