"""`scrub`: every detector's findings merged, then redacted without moving a line."""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bot.ingest.secrets.filekinds import is_config
from bot.ingest.secrets.keys import private_key_hits
from bot.ingest.secrets.keywords import keyword_hits, names_something_else
from bot.ingest.secrets.providers import RULES
from bot.ingest.secrets.rules import Hit, RuleSet
from bot.ingest.secrets.ruleset import ruleset_hits
from bot.ingest.secrets.shapes import URL_RULES
from bot.ingest.secrets.values import (
    decodes_to_data,
    is_harmless,
    is_hex_digest,
    is_placeholder,
    is_uuid,
    looks_generated,
    shannon_entropy,
)

REDACTED = "[REDACTED]"
TOKEN_RULES = RuleSet((*RULES, *URL_RULES))

# A long unquoted-or-quoted value ending a line of a configuration file, under any key.
_CONFIG_VALUE = re.compile(r"(?m)[=:][ \t]*[\"']?([A-Za-z0-9+/=_\-.]{20,256})[\"']?,?[ \t]*$")
_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True, slots=True)
class ScrubResult:
    text: str
    found: Counter[str]


def scrub(text: str, path: str = "", *, cut: bool = False) -> ScrubResult:
    """Redact secrets in `text`; the result has exactly as many lines as the input.
    `cut`: the text may stop inside a private key block (a diff excerpt's last lines)."""
    hits = list(find_secrets(text, path, cut=cut))
    if not hits:
        return ScrubResult(text, Counter())
    return _redact(text, [*hits, *_repeats(text, hits)])


def find_secrets(text: str, path: str = "", *, cut: bool = False) -> Iterator[Hit]:
    """Where the secrets of `text` are; spans may overlap and never hold a newline."""
    own = list(_own_hits(text, path, cut=cut))
    yield from own
    # The maintained rules, for the providers ours lack. Where ours found the secret too,
    # ours say where it is: `deploy:<password>` keeps its user name, a connection string
    # its endpoint.
    starts = sorted((h.start, h.end) for h in own)
    for hit in ruleset_hits(text):
        if not _overlaps(starts, hit):
            yield hit


def _overlaps(spans: list[tuple[int, int]], hit: Hit) -> bool:
    """Whether `hit` overlaps one of `spans` (sorted by start)."""
    before_end = bisect.bisect_left(spans, (hit.end, -1))  # the spans starting before it ends
    return any(end > hit.start for _, end in spans[:before_end])


def _own_hits(text: str, path: str, *, cut: bool) -> Iterator[Hit]:
    yield from private_key_hits(text, cut=cut)
    tokens = list(TOKEN_RULES.scan(text))
    yield from tokens
    folded = text.lower()
    if len(folded) != len(text):  # a few characters lower-case to two; keep positions aligned
        folded = text.translate(_ASCII_LOWER)
    for hit in keyword_hits(text, folded, path):
        # A value holding a token (a connection string with an AccountKey) loses the token only.
        if not any(hit.start <= t.start and t.end <= hit.end for t in tokens):
            yield hit
    if is_config(path):
        yield from _high_entropy_values(text)


_REPEAT_MIN = 16
# Kinds judged by context (a name, a config line): their values are repeated only when
# they look generated, so one doubtful call is not copied across a file.
_BY_CONTEXT = frozenset(
    {"keyword_secret", "authorization", "command_line_password", "high_entropy", "prose_secret"}
)


def _repeats(text: str, hits: list[Hit]) -> Iterator[Hit]:
    """Every other occurrence of a value already judged secret: the same token in a log
    line, a second argument or an example output is as secret as where it was found."""
    values = {
        value
        for h in hits
        if h.end - h.start >= _REPEAT_MIN
        and (
            (value := text[h.start : h.end])
            and (h.kind not in _BY_CONTEXT or looks_generated(value))
        )
    }
    for value in values:
        at = text.find(value)
        while at >= 0:
            yield Hit(at, at + len(value), "")
            at = text.find(value, at + len(value))


def holds_token(text: str) -> bool:
    """Whether a provider token or credential shape occurs in `text` (a path, a name)."""
    return next(iter(TOKEN_RULES.scan(text)), None) is not None


def _redact(text: str, hits: Iterable[Hit]) -> ScrubResult:
    found: Counter[str] = Counter()
    parts: list[str] = []
    done = 0
    for start, end, kind in _merged(hits):
        if end <= done:
            continue
        start = max(start, done)
        parts.append(text[done:start])
        # A span never crosses a line end, so the line count holds; guard it anyway.
        parts.append(
            "\n".join(REDACTED if piece else piece for piece in text[start:end].split("\n"))
        )
        if kind:
            found[kind] += 1
        done = end
    parts.append(text[done:])
    return ScrubResult("".join(parts), found)


def _merged(hits: Iterable[Hit]) -> Iterator[tuple[int, int, str]]:
    ordered = sorted(hits, key=lambda h: (h.start, -h.end))
    current: tuple[int, int, str] | None = None
    for hit in ordered:
        if current is not None and hit.start < current[1]:
            current = (current[0], max(current[1], hit.end), current[2])
            continue
        if current is not None:
            yield current
        current = (hit.start, hit.end, hit.kind)
    if current is not None:
        yield current


def _high_entropy_values(text: str) -> Iterator[Hit]:
    for match in _CONFIG_VALUE.finditer(text):
        value = match.group(1)
        if shannon_entropy(value) < 4.0 or is_placeholder(value) or is_harmless(value):
            continue
        if decodes_to_data(value) or is_uuid(value) or is_hex_digest(value):
            continue
        if names_something_else(_name_before(text, match.start())):
            continue  # client_id, checksum_url: the name says what the value is
        yield Hit(match.start(1), match.end(1), "high_entropy")


def _name_before(text: str, at: int) -> str:
    """The key a value is assigned to: the name just before the `=` or `:` at `at`."""
    window = text[max(0, at - 80) : at].rstrip(" \t\"'")
    return window[len(window.rstrip(_NAME_CHARS)) :]
