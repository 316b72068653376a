"""The counts behind the rate limits and the daily cap (`QuestionQuota`) in one SQLite file
(`CODECITE_HOME/limits.sqlite`), shared by every process on the data directory; and the
window arithmetic the PostgreSQL quota shares.

One row per counted key: `user` and `channel` rows keep the times of their latest
accepted questions (at most `limit` of them, packed doubles), a `day` row (keyed by the
UTC date) the number of questions accepted that day. A take reads its rows and writes
them back in one BEGIN IMMEDIATE transaction (the database write lock), so between
processes too a check and the count that follows it see one state, and a refusal writes
nothing. Rows idle longer than the window, and days older than KEEP_DAYS, are deleted
every PRUNE_EVERY takes, so the file stays small. A damaged file is set aside: the
counts start afresh.
"""

from __future__ import annotations

import itertools
import sqlite3
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.runtime.limits import QuotaUsage, Refusal
from bot.store.sqlite import SqliteFile

FILENAME = "limits.sqlite"
DAY_SECONDS = 86_400.0  # POSIX time has exactly this many seconds in every UTC day
KEEP_DAYS = 3  # daily counts kept (a status page may show yesterday's)
PRUNE_EVERY = 256  # takes between two prunes of idle rows (the first take prunes too)
USER, CHANNEL, DAY = "user", "channel", "day"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS quota (
    kind TEXT NOT NULL, key TEXT NOT NULL, stamps BLOB NOT NULL,
    answered INTEGER NOT NULL, last_at REAL NOT NULL, PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS quota_idle ON quota (kind, last_at);
"""


@dataclass(frozen=True, slots=True)
class Window:
    """One sliding window a question must pass: `limit` questions per `kind`/`key`."""

    kind: str
    key: str
    limit: int


def windows(
    user_key: str, channel_key: str | None, per_user: int, per_channel: int
) -> list[Window]:
    """The windows that apply, in lock order (user, then channel); a limit of 0 is off."""
    found = [Window(USER, user_key, per_user)] if per_user > 0 else []
    if channel_key and per_channel > 0:
        found.append(Window(CHANNEL, channel_key, per_channel))
    return found


def utc_day(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).date().isoformat()


def judge(
    seen: Sequence[tuple[Window, Sequence[float]]],
    answered: int,
    daily: int,
    *,
    window: float,
    now: float,
) -> Refusal | None:
    """The first limit that refuses a question now, given each window's stamps (oldest
    first) and the day's count; None when every one lets it through."""
    for win, stamps in seen:
        if len(stamps) >= win.limit:
            # the limit-th latest question must leave the window first
            wait = stamps[-win.limit] + window - now
            if wait > 0:
                return Refusal("user" if win.kind == USER else "channel", wait)
    if daily > 0 and answered >= daily:
        return Refusal("daily", DAY_SECONDS - now % DAY_SECONDS)
    return None


def advanced(stamps: Sequence[float], limit: int, window: float, now: float) -> list[float]:
    """`stamps` with `now` recorded: only those within the window, the latest `limit`."""
    kept = sorted([s for s in stamps if s > now - window] + [now])  # clocks may disagree
    return kept[-limit:]


def pack(stamps: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(stamps)}d", *stamps)


def unpack(raw: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(raw) // 8}d", raw)


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


class SqliteQuota:
    """`take(...)` counts a question only when every limit lets it through; thread-safe."""

    def __init__(self, path: Path) -> None:
        self._file = SqliteFile(path, "rate-limit store", _prepare, autocommit=True, timeout=15)
        self._takes = itertools.count()

    def take(
        self,
        user_key: str,
        channel_key: str | None,
        *,
        per_user: int,
        per_channel: int,
        daily: int,
        window: float,
        now: float,
    ) -> Refusal | None:
        wins = windows(user_key, channel_key, per_user, per_channel)
        prune = next(self._takes) % PRUNE_EVERY == 0
        day = utc_day(now)

        def op(db: sqlite3.Connection) -> Refusal | None:
            if prune:
                _prune(db, window, now)
            seen = [(w, _stamps(db, w)) for w in wins]
            row = db.execute(
                "SELECT answered FROM quota WHERE kind = ? AND key = ?", (DAY, day)
            ).fetchone()
            refusal = judge(seen, int(row[0]) if row else 0, daily, window=window, now=now)
            if refusal is not None:
                return refusal  # nothing written: a refusal uses no quota
            db.executemany(
                "INSERT INTO quota (kind, key, stamps, answered, last_at) VALUES (?, ?, ?, 0, ?) "
                "ON CONFLICT (kind, key) DO UPDATE SET stamps = excluded.stamps, "
                "last_at = excluded.last_at",
                [(w.kind, w.key, pack(advanced(s, w.limit, window, now)), now) for w, s in seen],
            )
            db.execute(
                "INSERT INTO quota (kind, key, stamps, answered, last_at) VALUES (?, ?, x'', 1, ?)"
                " ON CONFLICT (kind, key) DO UPDATE SET answered = answered + 1, "
                "last_at = max(last_at, excluded.last_at)",
                (DAY, day, now),
            )
            return None

        return self._file.write(op)

    def usage(self, *, window: float, now: float) -> QuotaUsage:
        def read(db: sqlite3.Connection) -> QuotaUsage:
            active = "SELECT count(*) FROM quota WHERE kind = ? AND last_at > ?"
            users = db.execute(active, (USER, now - window)).fetchone()
            channels = db.execute(active, (CHANNEL, now - window)).fetchone()
            day = db.execute(
                "SELECT answered FROM quota WHERE kind = ? AND key = ?", (DAY, utc_day(now))
            ).fetchone()
            return QuotaUsage(int(users[0]), int(channels[0]), int(day[0]) if day else 0)

        return self._file.run(read)

    def close(self) -> None:
        self._file.close()  # idempotent


def _stamps(db: sqlite3.Connection, win: Window) -> tuple[float, ...]:
    row = db.execute(
        "SELECT stamps FROM quota WHERE kind = ? AND key = ?", (win.kind, win.key)
    ).fetchone()
    return unpack(row[0]) if row else ()


def _prune(db: sqlite3.Connection, window: float, now: float) -> None:
    """Windows whose every question has left them (as good as new), and old days."""
    db.execute("DELETE FROM quota WHERE kind <> ? AND last_at <= ?", (DAY, now - window))
    oldest = utc_day(now - KEEP_DAYS * DAY_SECONDS)
    db.execute("DELETE FROM quota WHERE kind = ? AND key < ?", (DAY, oldest))


class ProcessQuota:
    """The same counts in this process's memory, by the same rules: what the limiter
    counts with while the shared store cannot be reached (`Limiter`'s fallback). Idle
    windows and old days are dropped as in the file; thread-safe."""

    def __init__(self) -> None:
        self._packed: dict[tuple[str, str], list[float]] = {}  # (kind, key) -> stamps
        self._days: dict[str, int] = {}
        self._lock = threading.Lock()
        self._takes = itertools.count()

    def take(
        self,
        user_key: str,
        channel_key: str | None,
        *,
        per_user: int,
        per_channel: int,
        daily: int,
        window: float,
        now: float,
    ) -> Refusal | None:
        wins = windows(user_key, channel_key, per_user, per_channel)
        day = utc_day(now)
        with self._lock:
            if next(self._takes) % PRUNE_EVERY == 0:
                self._prune(window, now)
            seen = [(w, self._packed.get((w.kind, w.key), [])) for w in wins]
            refusal = judge(seen, self._days.get(day, 0), daily, window=window, now=now)
            if refusal is not None:
                return refusal
            for w, stamps in seen:
                self._packed[(w.kind, w.key)] = advanced(stamps, w.limit, window, now)
            self._days[day] = self._days.get(day, 0) + 1
        return None

    def usage(self, *, window: float, now: float) -> QuotaUsage:
        with self._lock:
            active = [key for key, stamps in self._packed.items() if stamps[-1] > now - window]
            kinds = [kind for kind, _ in active]
            return QuotaUsage(
                kinds.count(USER), kinds.count(CHANNEL), self._days.get(utc_day(now), 0)
            )

    def _prune(self, window: float, now: float) -> None:
        for key in [k for k, s in self._packed.items() if not s or s[-1] <= now - window]:
            del self._packed[key]
        oldest = utc_day(now - KEEP_DAYS * DAY_SECONDS)
        for day in [d for d in self._days if d < oldest]:
            del self._days[day]

    def close(self) -> None:
        pass
