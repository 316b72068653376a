"""Diff excerpts of commit history, scrubbed as the files they come from.

An excerpt (`bot/ingest/history_log.py`) is a `path:` line, then that file's changed
lines as git wrote them (`+...` added, `-...` removed), then the next file's. Each
file's lines are scrubbed under its own path, without their markers, so every rule
reads them as it reads the file (`ENV` and `export` start their line, an `.ini` value
ends it, a config file's long random values count); and they are scrubbed whole, before
they are cut to the stored width: a token cut first is no token to any rule, and its
head (a JWT's first parts, a key block's first lines) would be kept. The excerpt's line
limit may stop inside a key block: a block left open is a key to its last line. The
changed lines of a file the index never reads (`.env`, `.netrc`, a key file) are all
redacted.
"""

from __future__ import annotations

from functools import lru_cache

from bot.ingest.filters import path_reason
from bot.ingest.secrets import REDACTED, scrub

_MARKERS = ("+", "-")
_NEVER_READ = frozenset({"secret_file", "secret_in_path"})  # as the index never reads them


def scrub_excerpt(excerpt: str, width: int) -> str:
    """`excerpt` with its secrets redacted, then each line cut to `width` characters."""
    out: list[str] = []
    path, markers, lines = "", [], []  # the current file's path and changed lines
    for line in excerpt.split("\n"):
        if line[:1] in _MARKERS:
            markers.append(line[0])
            lines.append(line[1:])
            continue
        out += _scrubbed(path, markers, lines)
        path, markers, lines = line.removesuffix(":"), [], []
        out.append(_path_line(line))
    out += _scrubbed(path, markers, lines)
    return "\n".join(line[:width] for line in out)


@lru_cache(maxsize=4096)
def _path_line(line: str) -> str:
    """A `path:` line scrubbed (a path may hold a token); the same paths recur in many
    commits' excerpts, and scrubbing is a pure function of the text."""
    return scrub(line).text


def _scrubbed(path: str, markers: list[str], lines: list[str]) -> list[str]:
    if not lines:
        return []
    if path_reason(path) in _NEVER_READ:  # `.env`, `.netrc`, `id_rsa`: not a line of them
        return [marker + REDACTED for marker in markers]
    # The excerpt's line limit may cut a file's lines inside a key block.
    clean = scrub("\n".join(lines), path, cut=True).text.split("\n")
    return [marker + line for marker, line in zip(markers, clean, strict=True)]
