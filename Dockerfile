# codecite in one image; each process of the Procfile is a `command` (see docker-compose.yml).
#   docker build -t codecite .
#   docker run --rm -e PORT=8080 -p 8080:8080 -e SLACK_BOT_TOKEN=... -e SLACK_APP_TOKEN=... \
#     -v codecite-data:/data codecite codecite serve --slack --no-schedule
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PATH=/opt/venv/bin:$PATH

# git fetches the repositories codecite indexes; nothing else is needed from the system.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin codecite \
    && mkdir /data && chown codecite:codecite /data

WORKDIR /app

# Dependencies first, in their own layer: rebuilt only when pyproject.toml (or the script)
# changes, not on every source edit. The same script installs the venv of `make` and CI.
COPY pyproject.toml ./
COPY scripts/install.sh scripts/install.sh
RUN sh scripts/install.sh deps /opt/venv

COPY README.md ./
COPY bot bot
COPY adapters adapters
RUN sh scripts/install.sh app /opt/venv

USER codecite
# CODECITE_HOME holds the local index, clones and (without a database URL) the state files.
ENV CODECITE_HOME=/data
VOLUME /data
EXPOSE 8080

# The web process; docker-compose.yml (or the platform) picks the process per container.
CMD ["codecite", "serve", "--no-schedule"]
