"""Where a named thing is mentioned, when only docs, tests or examples mention it.

A question about `RateLimiter` is "covered" by word counts when a README line or a
test's name says "rate limiter", yet the code has no such thing: an answer that shows
those lines as if they were it misleads. `outside_code` looks up the chunks that
mention a name (its written form and its snake_case form, so `RateLimiter` is found in
code that says `rate_limiter`) and reports them when none is code. It is cautious: a
name mentioned in more chunks than it reads counts as being in the code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.index.base import Index
from bot.retrieval.intent import file_kind
from bot.text.tokens import path_tokens, tokens_in

PROBE = 40  # chunks read per name; a name in more of them is taken to be in the code
LISTED = 3  # places named in the answer
OUTSIDE_CODE = frozenset({"doc", "test", "example"})
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True, slots=True)
class Mention:
    """A chunk outside the code that mentions a name."""

    path: str
    start_line: int
    end_line: int
    kind: str  # "doc", "test" or "example" (`intent.file_kind`)


def name_forms(surface: str) -> tuple[str, ...]:
    """Index tokens a name may be written as: `RateLimiter` -> ratelimiter, rate_limiter."""
    joined = surface.lower().strip("_")
    snake = _HUMP.sub("_", surface).lower().strip("_")
    flat = joined.replace("_", "")
    return tuple(dict.fromkeys(t for t in (joined, snake, flat) if t))


def outside_code(
    index: Index, tokens: Sequence[str], repos: frozenset[str] | None
) -> tuple[Mention, ...]:
    """The docs, tests and examples that mention any of `tokens`, if no code does (else
    ()); one place per file, at most `LISTED`."""
    wanted = frozenset(tokens)
    hits = index.lexical(list(tokens), repos=repos, k=PROBE)
    if len(hits) >= PROBE:
        return ()
    found: dict[str, Mention] = {}
    for hit in hits:
        chunk = hit.chunk
        text = f"{chunk.symbol}\n{chunk.header}\n{chunk.text}"
        if not wanted.intersection(path_tokens(chunk.path)) and not tokens_in(text, wanted):
            continue
        kind = file_kind(chunk.path)
        if kind not in OUTSIDE_CODE or (kind != "doc" and tokens_in(chunk.symbol, wanted)):
            return ()  # code mentions it, or a test or an example defines it
        found.setdefault(chunk.path, Mention(chunk.path, chunk.start_line, chunk.end_line, kind))
    return tuple(found.values())[:LISTED]
