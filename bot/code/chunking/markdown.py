"""Markdown: one section per ATX heading (`# ...`), named by its heading path.

Lines inside fenced code blocks (``` or ~~~) and YAML front matter are never
headings; indented code cannot be one either (a heading has at most three
leading spaces). Setext headings (underlined with === or ---) are not split
on. Text before the first heading is a section with an empty symbol.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.code.chunking.assemble import Piece, merge, trimmed
from bot.code.chunking.budget import ChunkBudget
from bot.code.lines import LineTable
from bot.models import Span

PATH_SEPARATOR = " > "
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)$")
_FRONT_MATTER = frozenset({"---", "+++"})


def markdown_spans(text: str, table: LineTable, budget: ChunkBudget) -> list[Span]:
    pieces = []
    for start, end, symbol in _sections(text.splitlines()):
        piece = trimmed(Piece(start, end, "section", symbol, "", is_def=True), table)
        if piece is not None:
            pieces.append(piece)
    return merge(pieces, table, budget)


def _sections(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(start, end, heading path) for each section, in order, covering every line."""
    path: list[tuple[int, str]] = []  # (level, title) of the open headings
    start, symbol = 1, ""
    for number, level, title in _headings(lines):
        if number > start:
            yield start, number - 1, symbol
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))
        start, symbol = number, PATH_SEPARATOR.join(t for _, t in path if t)
    if lines:
        yield start, len(lines), symbol


def _headings(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(line number, level, title) of every ATX heading outside code fences."""
    fence: tuple[str, int] | None = None
    number = _skip_front_matter(lines)
    while number < len(lines):
        line = lines[number]
        number += 1
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and _closes(opened, fence):
                fence = None
            continue
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = (opened.group(1)[0], len(opened.group(1)))
            continue
        match = _HEADING.match(line)
        if match:
            title = _CLOSING_HASHES.sub("", match.group(2) or "").strip()
            yield number, len(match.group(1)), title


def _closes(match: re.Match[str], fence: tuple[str, int]) -> bool:
    marks = match.group(1)
    return marks[0] == fence[0] and len(marks) >= fence[1] and not match.group(2).strip()


def _skip_front_matter(lines: list[str]) -> int:
    """Index of the first line after YAML/TOML front matter (0 when there is none)."""
    if not lines or lines[0].strip() not in _FRONT_MATTER:
        return 0
    marker = lines[0].strip()
    for index in range(1, len(lines)):
        if lines[index].strip() in (marker, "..."):
            return index + 1
    return 0
