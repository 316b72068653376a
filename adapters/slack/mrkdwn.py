"""Markdown (what the core writes) to Slack mrkdwn, with citations turned into links.

Slack's dialect differs: `*bold*`, `_italic_`, `~strike~`, `<url|text>` links,
no headings, no tables, no language tag on code fences. Every `&`, `<` and `>`
is escaped, so text that came from a repository or a model can never ping
`@channel` or forge a link; only the links built here are real.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from bot.answer.text import link_citations
from bot.models import Citation

_LOCAL = "local:"  # stands in for "no URL" so link_citations formats local labels too
_SLOT = re.compile("\x00(\\d+)\x00")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(?=\S)")
_QUOTE = re.compile(r"^(\s*>)+\s?")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[([^\]\n]+)\]\(\s*<?(https?://[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(label: str, url: str) -> str:
    """`<url|label>`, or the label in backticks when there is no URL (local repositories)."""
    if not url or url.startswith(_LOCAL):
        return f"`{label}`"
    safe_url = url.replace(" ", "%20").replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
    return f"<{escape(safe_url)}|{escape(label)}>"


def to_mrkdwn(markdown: str, citations: Sequence[Citation] = ()) -> str:
    """Convert `markdown` and link every citation label (outside code) to its permalink."""
    text = _unquote_labels(markdown.replace("\x00", ""), citations)
    slots: list[tuple[str, str]] = []  # (label, link) per placeholder

    def placeholder(label: str, url: str) -> str:
        slots.append((label, link(label, url)))
        return f"\x00{len(slots) - 1}\x00"

    marked = [dataclasses.replace(c, url=c.url or f"{_LOCAL}{c.label}") for c in citations]
    text = link_citations(text, marked, placeholder)
    converted = _convert(text, slots)
    return _SLOT.sub(lambda m: slots[int(m.group(1))][1], converted)


def _unquote_labels(text: str, citations: Sequence[Citation]) -> str:
    """`` `src/a.py:L3-L9` `` -> `src/a.py:L3-L9`, so a quoted label still becomes a link."""
    labels = sorted({c.label for c in citations}, key=len, reverse=True)
    if not labels:
        return text
    pattern = re.compile("`(" + "|".join(re.escape(label) for label in labels) + ")`")
    return pattern.sub(r"\1", text)


def _convert(text: str, slots: list[tuple[str, str]]) -> str:
    out: list[str] = []
    in_fence = False
    in_table = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append("```")  # Slack would print a language tag as code
            continue
        if in_fence:
            out.append(escape(line))
            continue
        is_row = bool(_TABLE_ROW.match(line))
        if is_row != in_table:  # tables have no mrkdwn form: show them monospaced
            out.append("```")
            in_table = is_row
        out.append(escape(line) if is_row else _convert_line(line, slots))
    if in_fence or in_table:
        out.append("```")
    return "\n".join(out)


def _convert_line(line: str, slots: list[tuple[str, str]]) -> str:
    heading = _HEADING.match(line)
    if heading:
        title = _inline(heading.group(1).replace("**", ""), slots)
        return f"*{title}*" if title else ""
    prefix = ""
    quote = _QUOTE.match(line)
    if quote:  # a leading ">" must stay raw for Slack to draw a quote
        prefix, line = "> ", line[quote.end() :]
    bullet = _BULLET.match(line)
    if bullet:
        prefix, line = f"{prefix}{bullet.group(1)}• ", line[bullet.end() :]
    return prefix + _inline(line, slots)


def _inline(text: str, slots: list[tuple[str, str]]) -> str:
    """Convert prose between code spans; code spans are only escaped."""
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_prose(text[last : span.start()]))
        # A citation inside a longer code span cannot be a link: show the bare label.
        code = _SLOT.sub(lambda m: slots[int(m.group(1))][0], span.group(2))
        out.append(f"`{escape(code)}`")
        last = span.end()
    out.append(_prose(text[last:]))
    return "".join(out)


def _prose(text: str) -> str:
    if not text:
        return ""
    links: list[str] = []

    def keep(match: re.Match[str]) -> str:
        links.append(link(match.group(1), match.group(2)))
        return f"\x01{len(links) - 1}\x01"

    text = escape(_LINK.sub(keep, text))
    text = _BOLD.sub("\x02\\1\x02", text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text).replace("\x02", "*")
    return re.sub("\x01(\\d+)\x01", lambda m: links[int(m.group(1))], text)
