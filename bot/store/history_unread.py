"""Commits a recorded history holds without their changes, because git could not read them.

A damaged repository (a lost or corrupt object, a promisor that cannot give a blob, a
`git log` stopped by its deadline) still has its other commits recorded
(`bot.ingest.history_damage`); the ones it could not diff are kept without line ranges.
That is noted beside the head's horizon, so the next ingest knows to try them again and
`status` can say so, with no change to the stored schema:
`commits=1000;days=0|unread=2|<sha>,<sha>|<why>`.
"""

from __future__ import annotations

from dataclasses import dataclass

_MARK = "|unread="
KEEP_SHAS = 50  # the unreadable commits remembered (and tried again): enough to probe


@dataclass(frozen=True, slots=True)
class UnreadNote:
    count: int = 0  # commits recorded without their changes
    shas: tuple[str, ...] = ()  # up to KEEP_SHAS of them
    reason: str = ""  # one line: why git could not read them

    def __bool__(self) -> bool:
        return self.count > 0

    def sentence(self) -> str:
        """One line for the ingest log and `status`."""
        noun = "commit" if self.count == 1 else "commits"
        return (
            f"{self.count:,} {noun} could not be read ({self.reason}), recorded without "
            "their changes; the next ingest tries again"
        )

    def joined(self, other: UnreadNote) -> UnreadNote:
        """This note and `other`'s (an incremental ingest adds to what was unread)."""
        if not other:
            return self
        if not self:
            return other
        shas = tuple(dict.fromkeys((*self.shas, *other.shas)))[:KEEP_SHAS]
        return UnreadNote(self.count + other.count, shas, other.reason or self.reason)


def with_unread(horizon: str, note: UnreadNote) -> str:
    """`horizon` as stored: with the note when some commits could not be read."""
    if not note:
        return horizon
    reason = " ".join(note.reason.replace("|", "/").split())[:300]
    return f"{horizon}{_MARK}{note.count}|{','.join(note.shas[:KEEP_SHAS])}|{reason}"


def split_horizon(stored: str) -> tuple[str, UnreadNote]:
    """The settings a history was built with, and what it could not read."""
    horizon, mark, rest = stored.partition(_MARK)
    if not mark:
        return stored, UnreadNote()
    count, _, rest = rest.partition("|")
    shas, _, reason = rest.partition("|")
    try:
        number = int(count)
    except ValueError:
        number = 0
    return horizon, UnreadNote(number, tuple(s for s in shas.split(",") if s), reason)
