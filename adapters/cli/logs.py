"""Logging for entry points: details to a file, one-liners to the terminal, secrets redacted."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from adapters.sections import PLATFORM_SECRETS
from bot.config import Settings

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The SDKs and HTTP clients under codecite: their INFO lines (a request, a query, a
# connection, a job run: several per question, some naming files of the install) are for
# `-v`; otherwise only their warnings and errors reach the log.
LIBRARIES = (
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "urllib3",
    "openai",
    "pinecone",
    "pinecone_plugin_interface",
    "slack_bolt",
    "slack_sdk",
    "discord",
    "aiohttp",
    "websockets",
    "apscheduler",
    "psycopg",
)


class RedactSecrets(logging.Filter):
    """Replace every configured secret value in a record's final text with ***."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
            record.exc_text = None
        for secret in self._secrets:
            message = message.replace(secret, "***")
        record.msg, record.args = message, None
        return True


class _QuietFileHandler(logging.handlers.RotatingFileHandler):
    """The log file is for later reading: a full disk must not print logging's own
    traceback on the terminal (the terminal handler still shows the line)."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


# A record whose sentence the terminal prints itself (the one line of an error): the log
# file keeps it, the terminal (or a server's stderr, its log) does not show it twice.
PRINTED = {"printed": True}


def _not_printed(record: logging.LogRecord) -> bool:
    return not getattr(record, "printed", False)


class _NoTraceback(logging.Formatter):
    """Terminal lines: the message only, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def secret_values(settings: Settings) -> list[str]:
    fields = (
        settings.openai_api_key,
        settings.pinecone_api_key,
        settings.github_token,
        settings.webhook_secret,
    )
    values = [f.get_secret_value() for f in fields if f is not None]
    if settings.database:  # the database URL and its password (psycopg's own logs too)
        from bot.store.postgres.connection import url_secrets

        values += url_secrets(settings.database)
    # The chat platforms' tokens belong to their adapters; their variable names are listed once.
    platform = (os.environ.get(name, "").strip() for name in PLATFORM_SECRETS)
    return values + [value for value in platform if value]


def setup_logging(
    settings: Settings, *, verbose: bool = False, server: bool = False
) -> Path | None:
    """Configure the root logger once. Servers log fully to stderr; the CLI to a file.
    The libraries' own INFO lines only with `verbose` (see LIBRARIES)."""
    root = logging.getLogger()
    root.handlers.clear()
    root.setLevel(logging.INFO)
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
    redact = RedactSecrets(secret_values(settings))
    log_file: Path | None = None
    if server:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler.addFilter(redact)
        handler.addFilter(_not_printed)
        root.addHandler(handler)
        return None
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        log_file = settings.home / "codecite.log"
        file_handler = _QuietFileHandler(
            log_file, maxBytes=5_000_000, backupCount=2, encoding="utf-8"
        )
        file_handler.setFormatter(logging.Formatter(_FORMAT))
        file_handler.addFilter(redact)
        root.addHandler(file_handler)
    except OSError:
        log_file = None
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(_NoTraceback())
    console.addFilter(redact)
    console.addFilter(_not_printed)
    root.addHandler(console)
    return log_file
