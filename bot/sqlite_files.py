"""Small SQLite files that must never stop the bot: a damaged one is set aside, not fatal."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)


def open_or_set_aside(
    path: Path, open_db: Callable[[Path], sqlite3.Connection], what: str
) -> sqlite3.Connection:
    """open_db(path); if the file is not a usable database, rename it and start a new one.

    `open_db` must close its connection before raising. OSError (permissions, disk) is
    not damage and propagates.
    """
    try:
        return open_db(path)
    except sqlite3.DatabaseError as exc:
        aside = path.with_name(f"{path.name}.damaged-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
        path.replace(aside)
        for sidecar in ("-wal", "-shm", "-journal"):
            Path(f"{path}{sidecar}").unlink(missing_ok=True)
        log.warning(
            "the %s %s was unreadable (%s); kept it as %s and started afresh",
            what,
            path,
            exc,
            aside.name,
        )
        return open_db(path)
