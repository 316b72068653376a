"""Make an answer safe to post: no mass or role pings, no foreign links, bounded length.

Applied to every answer, whatever produced it, because repository text and
model output are both untrusted. Platform syntaxes are neutralised here so
that every adapter inherits the guarantee (adapters add their own
allowed-mentions settings on top).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ZWSP = "\u200b"
MAX_ANSWER_CHARS = 12_000
LINK_REMOVED = "(link removed)"

_MASS_MENTION = re.compile(r"@(everyone|here|channel|all)\b", re.IGNORECASE)
_SLACK_SPECIAL = re.compile(r"<!(channel|here|everyone|subteam\^[A-Z0-9]+)(\|[^>]*)?>")
_SLACK_USER = re.compile(r"<@([UW][A-Z0-9]+)(\|[^>]*)?>")
_DISCORD_MENTION = re.compile(r"<@[!&]?(\d{5,25})>")
_MD_LINK = re.compile(r"\[([^\]\n]{1,300})\]\(<?(https?://[^)\s>]+)>?\)")
_URL = re.compile(r"https?://[^\s<>()\"'`]+")


def make_safe(text: str, allowed_urls: Iterable[str], source_text: str = "") -> str:
    allowed = {u.rstrip(".,;:") for u in allowed_urls if u}
    text = _neutralise_mentions(text)
    text = _drop_foreign_links(text, allowed, source_text)
    return _bounded(text)


def _neutralise_mentions(text: str) -> str:
    text = _SLACK_SPECIAL.sub(lambda m: f"@{ZWSP}{m.group(1).split('^')[0]}", text)
    text = _SLACK_USER.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)
    text = _DISCORD_MENTION.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)
    return _MASS_MENTION.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def _drop_foreign_links(text: str, allowed: set[str], source_text: str) -> str:
    def ok(url: str) -> bool:
        url = url.rstrip(".,;:")
        return url in allowed or (bool(source_text) and url in source_text)

    def markdown(match: re.Match[str]) -> str:
        return match.group(0) if ok(match.group(2)) else match.group(1)

    text = _MD_LINK.sub(markdown, text)
    return _URL.sub(lambda m: m.group(0) if ok(m.group(0)) else LINK_REMOVED, text)


def _bounded(text: str) -> str:
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    cut = text[:MAX_ANSWER_CHARS]
    cut = cut[: cut.rfind("\n")] if "\n" in cut[-500:] else cut
    if cut.count("```") % 2:
        cut += "\n```"
    return cut + "\n\n(answer shortened)"
