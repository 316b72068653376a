"""The chunks that hold what the symbol table found: definitions' lines and call sites.

`SymbolChunks` reads each file's chunks at most once per question; the finder puts
what it picks ahead of the similarity ranking so the answer can quote them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence

from bot.index.base import Index
from bot.models import Chunk, Hit
from bot.retrieval.intent import file_kind
from bot.symbols.model import SymbolDef, SymbolRef

SITE_FILES = 4  # files whose chunks are read to quote call sites
SITE_CHUNKS = 6  # call-site chunks put ahead of the ranking
QUOTED_SITES = 40  # sites whose line of code is kept for the answer
COVER_LOOKBACK = 8  # chunks starting before a line that are checked for holding it

Line = tuple[str, str, int]  # repo, path, line
Span = tuple[str, str, int, int]  # a chunk's place: repo, path, first and last line


class SymbolChunks:
    """Reads the chunks holding what was found, each file at most once per question."""

    def __init__(self, index: Index) -> None:
        self._index = index
        self._files: dict[tuple[str, str], FileChunks] = {}

    def of(self, repo: str, path: str) -> FileChunks:
        key = (repo, path)
        if key not in self._files:
            self._files[key] = FileChunks(self._index.chunks_of(repo, path))
        return self._files[key]

    def definitions(self, defs: Sequence[SymbolDef], *, chunks: int) -> list[Hit]:
        hits: list[Hit] = []
        for d in defs:
            covering = [
                c
                for c in self.of(d.repo, d.path).chunks
                if c.start_line <= d.end_line and c.end_line >= d.start_line
            ]
            hits.extend(Hit(c, 0.0) for c in covering[:chunks])
        return hits

    def sites(self, sites: Sequence[SymbolRef]) -> tuple[list[Hit], dict[Line, str]]:
        """The chunks with most sites (code first), and the line of code of the first sites."""
        files = set(list(dict.fromkeys((s.repo, s.path) for s in sites))[:SITE_FILES])
        counts: Counter[Span] = Counter()
        found: dict[Span, Chunk] = {}
        code: dict[Line, str] = {}
        for s in sites:
            if (s.repo, s.path) not in files:
                continue
            in_file = self.of(s.repo, s.path)
            chunk = in_file.covering(s.line)
            if chunk is None:
                continue
            key = span(chunk)
            counts[key] += 1
            found[key] = chunk
            if len(code) < QUOTED_SITES:
                code[(s.repo, s.path, s.line)] = in_file.line(chunk, s.line)
        ranked = sorted(found, key=lambda k: (file_kind(k[1]) != "code", -counts[k]))
        return [Hit(found[k], 0.0) for k in ranked[:SITE_CHUNKS]], code


def span(c: Chunk) -> Span:
    return c.repo, c.path, c.start_line, c.end_line


class FileChunks:
    """One file's chunks, searchable by line."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks  # in line order
        self._starts = [c.start_line for c in chunks]
        self._lines: dict[Span, list[str]] = {}

    def covering(self, line: int) -> Chunk | None:
        """The smallest chunk holding `line` (chunks rarely overlap: a few are checked)."""
        best: Chunk | None = None
        i = bisect_right(self._starts, line)
        for c in self.chunks[max(0, i - COVER_LOOKBACK) : i]:
            if c.end_line >= line and (best is None or c.end_line - c.start_line < size(best)):
                best = c
        return best

    def line(self, chunk: Chunk, line: int) -> str:
        key = span(chunk)
        if key not in self._lines:
            self._lines[key] = chunk.text.split("\n")
        lines = self._lines[key]
        offset = line - chunk.start_line
        return lines[offset] if 0 <= offset < len(lines) else ""


def size(c: Chunk) -> int:
    return c.end_line - c.start_line
