"""Answers and command results as Discord messages: pure functions, no SDK calls.

Discord renders a subset of Markdown: code fences, masked links
`[text](<url>)` (the angle brackets stop the link preview) and `-# ` small
text. A message holds at most 2,000 characters, so every reply goes through
`split_message`, which never leaves a code fence open in a piece. A streamed
answer is split with `streamed=True`: each message is filled before the next
begins, so a message that is complete stays as it is while the answer grows.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.answer.text import citation_note, link_citations, split_message
from bot.models import Answer

MESSAGE_LIMIT = 2000  # Discord's hard limit on message content
# Pieces stay a little under the limit: Discord counts some characters (astral
# emoji) differently from Python, and a margin is cheaper than a rejected send.
SAFE_LIMIT = MESSAGE_LIMIT - 100
QUOTE_LIMIT = 300  # how much of a slash-command question is echoed above the answer
THREAD_NAME_LIMIT = 90  # Discord allows 100
NOTES = 8  # cited places (or commits) the footer names: as many as Slack's sources show

ZWSP = "\u200b"
_MASS_MENTION = re.compile(r"@(everyone|here)", re.IGNORECASE)
_LOCAL = "\0local"  # marks citations without a permalink while linking
_LABEL_SPECIALS = re.compile(r"([\\*_~|`\[\]])")
FENCE = re.compile(r"^\s*(```|~~~)")  # as split_message counts fences


def neutralise_mentions(text: str) -> str:
    """Break `@everyone`/`@here` with a zero-width space so they cannot ping (defence in depth)."""
    return _MASS_MENTION.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def strip_mention(content: str, user_id: int) -> str:
    """The message text without mentions of `user_id` (`<@id>` and the legacy `<@!id>`)."""
    return re.sub(rf"<@!?{user_id}>", " ", content).strip()


def citation_link(label: str, url: str) -> str:
    """A masked link for a permalink; a code span for local repositories (no URL)."""
    if url == _LOCAL:
        return f"`{label}`"
    safe_url = url.replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")
    text = _LABEL_SPECIALS.sub(r"\\\1", label)
    return f"[{text}](<{safe_url}>)"


def link_answer(answer: Answer) -> str:
    """Answer text with each citation label turned into a link (or a code span)."""
    citations = [replace(c, url=c.url or _LOCAL) for c in answer.citations]
    text = answer.text
    for label in {c.label for c in citations}:
        # A label the model already put in backticks would not render as a link.
        text = text.replace(f"`{label}`", label)
    return link_citations(text, citations, citation_link)


def freshness_footer(answer: Answer) -> str:
    """Small print: what last changed the cited code (or each cited commit), and freshness."""
    noted = [c for c in answer.citations if c.changed is not None]
    lines = [
        f"-# {citation_link(c.label, c.url or _LOCAL)}{citation_note(c, citation_link)}"
        for c in noted[:NOTES]
    ]
    if len(noted) > NOTES:
        lines.append(f"-# …and {len(noted) - NOTES} more")
    if answer.freshness:
        lines.append("-# " + " · ".join(f.describe() for f in answer.freshness))
    return "\n".join(lines)


def quote_question(question: str) -> str:
    """The question as a one-line quote, for slash commands whose options Discord hides."""
    flat = " ".join(question.split())
    if len(flat) > QUOTE_LIMIT:
        flat = flat[: QUOTE_LIMIT - 1].rstrip() + "…"
    return f"> {flat}"


def render_answer(answer: Answer, *, question: str = "", streamed: bool = False) -> list[str]:
    """The message pieces for an answer: optional quoted question, body, freshness footer."""
    parts = [quote_question(question)] if question.strip() else []
    parts.append(link_answer(answer).strip())
    footer = freshness_footer(answer)
    if footer:
        parts.append(footer)
    return render_text("\n\n".join(p for p in parts if p), streamed=streamed)


def render_text(text: str, *, streamed: bool = False) -> list[str]:
    """Any markdown we send: mass mentions neutralised, split under the message limit."""
    text = neutralise_mentions(text.strip()) or "(no answer)"
    pieces = split_message(text, SAFE_LIMIT, paragraphs=not streamed)
    return [piece for piece in pieces if piece.strip()]


def render_partial(text: str, *, question: str = "") -> list[str]:
    """The messages for an answer still being written: like `render_answer` with
    `streamed=True`, and a code block still open at the end shown closed (for now)."""
    body = f"{quote_question(question)}\n\n{text}" if question.strip() else text
    pieces = render_text(body, streamed=True)
    if _open_fence(pieces[-1]):
        pieces[-1] += "\n```"  # the margin under MESSAGE_LIMIT leaves room for it
    return pieces


def _open_fence(piece: str) -> bool:
    return sum(1 for line in piece.splitlines() if FENCE.match(line)) % 2 == 1


def thread_name(question: str) -> str:
    """A thread title from the first line of the question."""
    first = next((line.strip() for line in question.splitlines() if line.strip()), "")
    first = neutralise_mentions(first)
    if len(first) > THREAD_NAME_LIMIT:
        first = first[: THREAD_NAME_LIMIT - 1].rstrip() + "…"
    return first or "codecite answer"


def strip_footer(content: str) -> str:
    """A bot message without its `-# ` footer lines, for use as conversation history."""
    lines = [line for line in content.splitlines() if not line.startswith("-# ")]
    return "\n".join(lines).strip()
