"""Command-registration hashes in PostgreSQL (`CommandHashes`): one row per store name,
so every replica knows what was last registered. Best-effort like the JSON file: a
failed read is "nothing registered", a failed write is logged."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from bot.errors import BotError
from bot.store.postgres.connection import Database

log = logging.getLogger(__name__)


class PostgresCommandHashes:
    def __init__(self, database: Database, name: str, what: str) -> None:
        self._db = database
        self._name = name
        self._what = what

    def get(self, application: str) -> dict[str, str]:
        try:
            row = self._db.run(
                lambda conn: conn.execute(
                    "SELECT application, hashes FROM command_hashes WHERE name = %s",
                    (self._name,),
                ).fetchone()
            )
        except BotError as exc:
            log.warning("%s not read: %s", self._what, exc.detail or exc.user_message)
            return {}
        if row is None or row[0] != application or not isinstance(row[1], dict):
            return {}  # another application (or none yet): everything is registered afresh
        return {str(k): str(v) for k, v in row[1].items()}

    def set(self, application: str, hashes: Mapping[str, str]) -> None:
        from psycopg.types.json import Jsonb

        body = Jsonb(dict(sorted(hashes.items())))
        try:
            self._db.run(
                lambda conn: conn.execute(
                    "INSERT INTO command_hashes VALUES (%s, %s, %s) ON CONFLICT (name) "
                    "DO UPDATE SET application = excluded.application, hashes = excluded.hashes",
                    (self._name, application, body),
                )
            )
        except BotError as exc:
            log.warning("%s not saved: %s", self._what, exc.detail or exc.user_message)

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""
