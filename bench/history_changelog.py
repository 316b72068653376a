"""Changelog entries that name their pull request or issue, from Markdown or reStructuredText.

An entry is one list item ("- ", "* " or "+ " at the start of a line, after any
indentation) with everything indented under it: nested items, continuation lines and
paragraphs after blank lines (towncrier's "*Related issues and pull requests*" block).
Its version is the nearest heading above it that names one (Markdown "## 1.2.0", or a
reStructuredText title underlined with = - ~ ^ *; "Unreleased" too). Numbers come from
Sphinx roles (:issue:`N`, :pr:`N`), "#N", and links ending /issues/N or /pull/N, in order
of appearance, each once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BULLET = re.compile(r"^(\s*)[-*+]\s+(\S.*)$")
_MD_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_RST_RULE = re.compile(r"^([=\-~^*])\1{2,}\s*$")
_VERSION = re.compile(r"\d+\.\d+|unreleased|^tbd$", re.IGNORECASE)
_NUMBER = re.compile(
    r":(?:issue|pr|pull):`(\d+)`"  # Sphinx roles (sphinx-issues, pallets-sphinx-themes)
    r"|(?<![\w&/#])#(\d+)\b"  # "#1234", not an HTML entity or an anchor
    r"|/(?:issues|pull)/(\d+)\b"  # links to GitHub issues and pull requests
)


@dataclass(frozen=True, slots=True)
class Entry:
    version: str
    line: int  # 1-based line of the item's bullet
    text: str  # the item's lines joined by single spaces, bullets and indentation dropped
    numbers: tuple[int, ...]


def numbers_in(text: str) -> tuple[int, ...]:
    found = (int(next(g for g in m.groups() if g)) for m in _NUMBER.finditer(text))
    return tuple(dict.fromkeys(found))


def parse_changelog(text: str) -> list[Entry]:
    lines = text.splitlines()
    entries: list[Entry] = []
    version = ""
    current: tuple[int, int, list[str]] | None = None  # (line, indent, parts)

    def close() -> None:
        nonlocal current
        if current is not None:
            line, _, parts = current
            joined = " ".join(" ".join(parts).split())
            entries.append(Entry(version, line, joined, numbers_in(joined)))
        current = None

    for i, raw in enumerate(lines):
        heading = _heading(lines, i)
        bullet = _BULLET.match(raw)
        if heading is not None:
            close()
            if _VERSION.search(heading):  # not a section ("Bug fixes") inside a release
                version = heading
        elif bullet and (current is None or len(bullet.group(1)) <= current[1]):
            close()
            current = (i + 1, len(bullet.group(1)), [bullet.group(2)])
        elif current is not None and raw.strip():
            if len(raw) - len(raw.lstrip()) > current[1] or bullet:
                current[2].append(raw.strip())
            else:
                close()
    close()
    return entries


def _heading(lines: list[str], i: int) -> str | None:
    line = lines[i].rstrip()
    if m := _MD_HEADING.match(line):
        return m.group(1)
    if not line or _RST_RULE.match(line) or _BULLET.match(line) or line[0].isspace():
        return None
    below = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
    if _RST_RULE.match(below) and len(below) >= len(line):
        return line
    return None
