"""Line arithmetic that agrees with `str.splitlines()`.

Chunk line numbers must index `text.splitlines()` exactly, which breaks lines
at \\r, \\r\\n, \\f, \\v, \\x1c-\\x1e, \\x85, \\u2028 and \\u2029 as well as \\n.
tree-sitter counts rows at \\n only, so byte offsets are mapped to lines here
instead of trusting its rows.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

# Every encoder in this package uses these, so byte offsets always agree.
ENCODING = "utf-8"
ENCODING_ERRORS = "surrogatepass"


class LineTable:
    """Per-line facts about one text: blankness, sizes and byte offsets (1-based lines)."""

    __slots__ = ("_byte_starts", "_char_ends", "blank", "count")

    def __init__(self, text: str, *, with_bytes: bool = False) -> None:
        lines = text.splitlines()
        self.count = len(lines)
        # blank[i] is for line i (1-based); index 0 is a sentinel.
        self.blank = [True, *(not line.strip() for line in lines)]
        # A line's size counts one character for its line break.
        self._char_ends = list(accumulate((len(line) + 1 for line in lines), initial=0))
        self._byte_starts: list[int] = []
        if with_bytes:
            self._byte_starts = _byte_starts(text)

    @property
    def byte_starts(self) -> list[int]:
        """Byte offset of each line's start (index 0 is line 1); empty without bytes.

        `bisect_right(byte_starts, offset)` is `line_of_byte(offset)` before clamping, for
        callers mapping many offsets.
        """
        return self._byte_starts

    def chars(self, start: int, end: int) -> int:
        """Characters in lines start..end inclusive."""
        return self._char_ends[end] - self._char_ends[start - 1]

    def last_within(self, start: int, max_chars: int) -> int:
        """The last line L >= start with chars(start, L) <= max_chars (at least start)."""
        limit = self._char_ends[start - 1] + max_chars
        return max(start, min(self.count, bisect_right(self._char_ends, limit) - 1))

    def line_of_byte(self, offset: int) -> int:
        """The 1-based line holding byte `offset` (clamped to the text)."""
        line = bisect_right(self._byte_starts, offset)
        return max(1, min(self.count, line))

    def first_text(self, start: int, end: int) -> int:
        """The first non-blank line in start..end, or end + 1 when all are blank."""
        blank = self.blank
        while start <= end and blank[start]:
            start += 1
        return start

    def last_text(self, start: int, end: int) -> int:
        """The last non-blank line in start..end, or start - 1 when all are blank."""
        blank = self.blank
        while end >= start and blank[end]:
            end -= 1
        return end


def _byte_starts(text: str) -> list[int]:
    """Byte offset at which each line starts, as the encoded text will have it."""
    kept = text.splitlines(keepends=True)
    sizes: Iterable[int]
    if text.isascii():
        sizes = map(len, kept)
    else:
        sizes = (len(line.encode(ENCODING, ENCODING_ERRORS)) for line in kept)
    return list(accumulate(sizes, initial=0))[:-1]
