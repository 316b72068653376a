"""Answers people rated: stored with the question, answer and citations for later evaluation.

Each posted answer is recorded once (`record_answer`) and gets an id that the
adapter puts in its 👍/👎 buttons; a click stores or replaces that user's vote.
Shared by every adapter through the data directory.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.models import Answer, Citation
from bot.store.records import FeedbackRow
from bot.store.sqlite import SqliteFile

__all__ = ["FeedbackRow", "FeedbackStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id TEXT PRIMARY KEY, platform TEXT NOT NULL, channel TEXT NOT NULL, asker TEXT NOT NULL,
    question TEXT NOT NULL, answer TEXT NOT NULL, citations TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS votes (
    answer_id TEXT NOT NULL REFERENCES answers(id), voter TEXT NOT NULL, vote INTEGER NOT NULL,
    at TEXT NOT NULL, PRIMARY KEY (answer_id, voter)
);
"""


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


class FeedbackStore:
    """`feedback.sqlite`: the `FeedbackRecords` part of the storage contract."""

    def __init__(self, path: Path) -> None:
        self._file = SqliteFile(path, "feedback store", _prepare, synchronous="FULL")

    def record_answer(
        self, *, platform: str, channel: str, asker: str, question: str, answer: Answer
    ) -> str:
        answer_id = uuid.uuid4().hex[:16]
        cites = json.dumps([_cite_json(c) for c in answer.citations])
        row = (answer_id, platform, channel, asker, question, answer.text, cites, _now())
        self._file.write(
            lambda db: db.execute("INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        )
        return answer_id

    def record_vote(self, answer_id: str, voter: str, vote: int) -> bool:
        """Store (or change) one user's vote; False when the answer is unknown."""
        if vote not in (1, -1):
            raise ValueError("vote must be +1 or -1")

        def store(db: sqlite3.Connection) -> bool:
            known = db.execute("SELECT 1 FROM answers WHERE id = ?", (answer_id,)).fetchone()
            if known is None:
                return False
            db.execute(
                "INSERT INTO votes VALUES (?, ?, ?, ?) ON CONFLICT(answer_id, voter) "
                "DO UPDATE SET vote = excluded.vote, at = excluded.at",
                (answer_id, voter, vote, _now()),
            )
            return True

        return self._file.write(store)

    def list(self, limit: int = 100) -> list[FeedbackRow]:
        rows = self._file.run(
            lambda db: db.execute(
                "SELECT a.id, a.platform, a.channel, a.question, a.answer, a.citations, v.voter, "
                "v.vote, v.at FROM votes v JOIN answers a ON a.id = v.answer_id "
                "ORDER BY v.at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        )
        return [_row(r) for r in rows]

    def close(self) -> None:
        self._file.close()  # idempotent


def _cite_json(c: Citation) -> dict[str, object]:
    return {"label": c.label, "repo": c.repo, "url": c.url}


def _row(r: Sequence[object]) -> FeedbackRow:
    cites = tuple(str(c["label"]) for c in json.loads(str(r[5])))
    return FeedbackRow(
        answer_id=str(r[0]),
        platform=str(r[1]),
        channel=str(r[2]),
        question=str(r[3]),
        answer=str(r[4]),
        citations=cites,
        voter=str(r[6]),
        vote=int(str(r[7])),
        at=datetime.fromisoformat(str(r[8])),
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()
