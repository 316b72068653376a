"""How big a chunk may grow, and when neighbours are merged."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChunkBudget:
    """Size limits for one chunk.

    A definition within `max_lines` and `max_chars` stays whole; a bigger one
    is split at its children, or into line windows when it has none. Pieces
    under `min_chars` are merged with small neighbours up to the limits.
    Windows hold up to `window_lines` lines (never more than `max_lines` or
    `max_chars`) and repeat the last `window_overlap` lines of the previous one.
    """

    max_lines: int = 80
    max_chars: int = 3000
    min_chars: int = 400
    window_lines: int = 60
    window_overlap: int = 10

    def __post_init__(self) -> None:
        if self.max_lines < 1 or self.max_chars < 1 or self.window_lines < 1:
            raise ValueError("chunk limits must be positive")
        if not 0 <= self.window_overlap < self.window_lines:
            raise ValueError("window_overlap must be smaller than window_lines")
        if not 0 <= self.min_chars <= self.max_chars:
            raise ValueError("min_chars must lie between 0 and max_chars")

    @property
    def crumb_chars(self) -> int:
        """Pieces this small (a closing brace, `end`, a package line) always join a neighbour."""
        return self.min_chars // 4


DEFAULT_BUDGET = ChunkBudget()
