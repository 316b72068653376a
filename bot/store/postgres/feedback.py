"""Answers on record and their votes in PostgreSQL (`FeedbackRecords`), shared by every
replica: a vote given through one process shows in `codecite feedback` anywhere."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.models import Answer
from bot.store.postgres.connection import Database
from bot.store.records import FeedbackRow

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]


class PostgresFeedback:
    def __init__(self, database: Database) -> None:
        self._db = database

    def record_answer(
        self, *, platform: str, channel: str, asker: str, question: str, answer: Answer
    ) -> str:
        from psycopg.types.json import Jsonb

        answer_id = uuid.uuid4().hex[:16]
        cites = Jsonb([{"label": c.label, "repo": c.repo, "url": c.url} for c in answer.citations])
        row = (answer_id, platform, channel, asker, question, answer.text, cites, _now())
        self._db.run(
            lambda conn: conn.execute(
                "INSERT INTO answers VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", row
            )
        )
        return answer_id

    def record_vote(self, answer_id: str, voter: str, vote: int) -> bool:
        """Store (or change) one user's vote; False when the answer is unknown."""
        if vote not in (1, -1):
            raise ValueError("vote must be +1 or -1")

        def store(conn: Conn) -> bool:
            done = conn.execute(
                "INSERT INTO votes SELECT id, %s, %s, %s FROM answers WHERE id = %s "
                "ON CONFLICT (answer_id, voter) DO UPDATE SET vote = excluded.vote, "
                "at = excluded.at",
                (voter, vote, _now(), answer_id),
            )
            return done.rowcount > 0

        return self._db.run(store)

    def list(self, limit: int = 100) -> list[FeedbackRow]:
        rows = self._db.run(
            lambda conn: conn.execute(
                "SELECT a.id, a.platform, a.channel, a.question, a.answer, a.citations, "
                "v.voter, v.vote, v.at FROM votes v JOIN answers a ON a.id = v.answer_id "
                "ORDER BY v.at DESC LIMIT %s",
                (limit,),
            ).fetchall()
        )
        return [_row(r) for r in rows]

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""


def _row(r: Sequence[object]) -> FeedbackRow:
    cites = r[5]
    at = r[8]
    assert isinstance(cites, list) and isinstance(at, datetime)
    return FeedbackRow(
        answer_id=str(r[0]),
        platform=str(r[1]),
        channel=str(r[2]),
        question=str(r[3]),
        answer=str(r[4]),
        citations=tuple(str(c["label"]) for c in cites),
        voter=str(r[6]),
        vote=int(str(r[7])),
        at=at.astimezone(UTC),
    )


def _now() -> datetime:
    return datetime.now(UTC)
