"""One line on what a part of the code is for, in the code's own words, with where it says so.

A folder's role is the first sentence of its README, else its package's doc (Python
`__init__.py`, a Go `// Package x ...` comment, an `index` file's leading comment); a
file's is its leading docstring or comment (licence headers skipped); a definition's is
the comment right above it or the docstring right below its first line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.symbols.model import SymbolDef

ROLE_CHARS = 110
LEAD_LINES = 60  # how far into a file its leading comment may start
# `//!` and `/*!` open Rust's module docs; `#[derive(...)]` and `#include` are no comments.
_COMMENT = re.compile(r"^\s*(?://+!?|#+(?![\[!]|include\b|define\b|if)|/\*+!?|\*+/?|--)\s?")
_NOT_ROLE = re.compile(
    r"copyright|licen[cs]e|spdx|all rights|eslint|@ts-|noqa|coding[:=]|^!|^\s*$|generated|"
    r"^\s*(?:use strict|type:|mypy:)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[a-z0-9)`'\"])[.!?](?:\s|$)")

Texts = Callable[[str], str]  # path -> the file's indexed text


@dataclass(frozen=True, slots=True)
class Role:
    text: str
    path: str
    start_line: int
    end_line: int


def folder_role(
    text_of: Texts, folder: str, files: Sequence[str], paths: Sequence[str]
) -> Role | None:
    readme = next(
        (
            p
            for p in paths
            if p.rsplit("/", 1)[0] == folder and p.rsplit("/", 1)[-1].lower().startswith("readme")
        ),
        None,
    )
    if readme is not None:
        role = _readme_role(text_of(readme), readme)
        if role is not None:
            return role
    inside = [f for f in files if f.rsplit("/", 1)[0] == folder]
    named = (
        "__init__.py",
        "doc.go",
        "index.ts",
        "index.js",
        "mod.rs",
        "lib.rs",
        "package-info.java",
    )
    for path in sorted(inside, key=lambda f: f.rsplit("/", 1)[-1] not in named):
        role = file_role(text_of, path)
        if role is not None and (path.endswith(named) or role.text.lower().startswith("package ")):
            return role
    return None


def file_role(text_of: Texts, path: str) -> Role | None:
    """The file's leading docstring or comment, as one line."""
    lines = text_of(path).split("\n")[:LEAD_LINES]
    skip_to = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if i < skip_to or not stripped or stripped.startswith("#!"):
            continue
        if _NOT_ROLE.search(stripped):
            skip_to = _block_end(lines, i)  # a licence header: the whole comment block
            continue
        if stripped.startswith(('"""', "'''", 'r"""')):
            return _docstring(lines, i, path)
        if _COMMENT.match(line):
            role = _comment_block(lines, i, path)
            if role is not None:
                return role
            continue
        if re.match(r"(?:package|import|from|use|require|const|var|let|export|module)\b", stripped):
            continue  # code before any comment: the file says nothing of itself up top
        return None
    return None


def _block_end(lines: Sequence[str], i: int) -> int:
    """The first line after the comment block holding line `i`."""
    j = i
    while j < len(lines) and _COMMENT.match(lines[j]) and lines[j].strip():
        j += 1
    if lines[i].strip().startswith("/*"):
        j = next((k + 1 for k in range(i, len(lines)) if "*/" in lines[k]), j)
    return max(j, i + 1)


def definition_role(text_of: Texts, d: SymbolDef) -> Role | None:
    """The comment right above `d`, or the docstring right after its first line."""
    lines = text_of(d.path).split("\n")
    top = d.start_line - 2
    end = top
    while top >= 0 and _COMMENT.match(lines[top]) and lines[top].strip():
        top -= 1
    if end > top:
        return _comment_block(lines, top + 1, d.path)
    for i in range(d.start_line, min(d.start_line + 4, d.end_line, len(lines))):
        if lines[i].strip().startswith(('"""', "'''", 'r"""')):
            return _docstring(lines, i, d.path)
    return None


def _docstring(lines: Sequence[str], i: int, path: str) -> Role | None:
    body = []
    quote = lines[i].strip().lstrip("r")[:3]
    for j in range(i, min(i + 12, len(lines))):
        text = lines[j].strip()
        text = text.lstrip("r").removeprefix(quote) if j == i else text
        done = quote in text
        body.append(text.split(quote, 1)[0])
        if done or (body[-1] == "" and len(body) > 1):
            return _role(" ".join(body), path, i + 1, j + 1)
    return _role(" ".join(body), path, i + 1, min(i + 12, len(lines)))


def _comment_block(lines: Sequence[str], i: int, path: str) -> Role | None:
    body, j = [], i
    while j < len(lines) and j < i + 12 and _COMMENT.match(lines[j]) and lines[j].strip():
        text = _COMMENT.sub("", lines[j]).strip().removesuffix("*/").strip()
        if text and not _NOT_ROLE.search(text):
            body.append(text)
        elif body:
            break
        j += 1
    return _role(" ".join(body), path, i + 1, max(i + 1, j))


def _readme_role(text: str, path: str) -> Role | None:
    for i, line in enumerate(text.split("\n")[:LEAD_LINES]):
        s = line.strip()
        if not s or s.startswith(("#", "[", "!", "<", "|", "```", "---", "===", ">")):
            continue
        return _role(s, path, i + 1, i + 1)
    return None


def _role(text: str, path: str, start: int, end: int) -> Role | None:
    text = re.sub(r"\s+", " ", text).strip()
    m = _SENTENCE.search(text)
    if m is not None:
        text = text[: m.start() + 1]
    if len(text) > ROLE_CHARS:
        text = text[: ROLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return Role(text, path, start, end) if len(text) >= 8 else None
