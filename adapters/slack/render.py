"""Answers and command results as Slack messages that Slack will always accept.

Limits honoured: a section's text <= 3,000 characters, <= 50 blocks and
<= 40,000 characters of `text` per message. A long answer becomes several
messages (the caller posts them in one thread); the last one carries the
sources, the freshness footer and the 👍/👎 buttons. Every message's `text`
is a complete plain-mrkdwn rendering, so it doubles as the fallback when
Slack refuses the blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from adapters.slack.mrkdwn import escape, link, to_mrkdwn
from bot.answer.text import citation_note, split_message
from bot.commands import CONFIRM
from bot.models import Answer, Attachment, Citation

SECTION_CHARS = 2900  # Slack's limit is 3,000; headroom for reopened code fences
SECTIONS_PER_MESSAGE = 4  # ~12k characters: readable, far below 40,000
MAX_SOURCES = 8
CONTEXT_CHARS = 1900
QUOTE_CHARS = 500

VOTE_UP = "codecite_vote_up"
VOTE_DOWN = "codecite_vote_down"
FEEDBACK_BLOCK = "codecite_feedback"
CONFIRM_ACTION = "codecite_confirm"  # the button of a command that asks first (`forget`)
CONFIRM_BLOCK = "codecite_confirm"

Block = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SlackMessage:
    text: str  # mrkdwn; the whole message, used alone when blocks are refused
    blocks: tuple[Block, ...] = ()
    files: tuple[Attachment, ...] = ()  # uploaded into the message's thread once it is posted


def render_answer(answer: Answer, *, answer_id: str = "", preface: str = "") -> list[SlackMessage]:
    """The answer (after an optional mrkdwn `preface`) as one or more messages."""
    body = to_mrkdwn(answer.text, answer.citations) or "_(no answer text)_"
    if preface:
        body = f"{preface}\n\n{body}"
    groups = _grouped(split_message(body, SECTION_CHARS))
    messages = [_message(group) for group in groups[:-1]]
    footer_text, footer_blocks = footer(answer, answer_id)
    last = groups[-1]
    messages.append(
        SlackMessage(
            text="\n\n".join(p for p in (*last, footer_text) if p),
            blocks=(*(_section(piece) for piece in last), *footer_blocks),
            files=answer.attachments,
        )
    )
    return messages


def render_text(markdown: str) -> list[SlackMessage]:
    """A command result or an error (markdown) as messages."""
    body = to_mrkdwn(markdown) or "_(nothing to show)_"
    return [_message(group) for group in _grouped(split_message(body, SECTION_CHARS))]


def render_confirm(markdown: str, line: str) -> list[SlackMessage]:
    """A command's question (`forget`): its text, then a red button that sends `line`
    ("forget shop yes"), behind Slack's own "are you sure?" dialog, so one stray click
    does nothing."""
    *head, last = render_text(markdown)
    label = line.removesuffix(f" {CONFIRM}").capitalize()  # "Forget shop"
    button = {
        "type": "button",
        "action_id": CONFIRM_ACTION,
        "value": line,
        "style": "danger",
        "text": _plain(label, 75),
        "confirm": {
            "title": _plain(f"{label}?", 100),
            "text": _plain("This cannot be undone; it can only be indexed again.", 300),
            "confirm": _plain(label, 30),
            "deny": _plain("Keep it", 30),
            "style": "danger",
        },
    }
    actions = {"type": "actions", "block_id": CONFIRM_BLOCK, "elements": [button]}
    return [*head, SlackMessage(last.text, (*last.blocks, actions))]


def _plain(text: str, limit: int) -> Block:
    """A plain_text object within Slack's `limit` for its field."""
    short = text if len(text) <= limit else text[: limit - 1] + "…"
    return {"type": "plain_text", "text": short, "emoji": False}


def quote_question(user: str, question: str) -> str:
    """`*@user asked:*` and the question as a Slack quote (mrkdwn)."""
    text = question.strip()
    if len(text) > QUOTE_CHARS:
        text = text[: QUOTE_CHARS - 1].rstrip() + "…"
    quoted = "\n".join(f"> {escape(line)}" for line in text.splitlines() or [""])
    return f"*<@{user}> asked:*\n{quoted}"


def _grouped(pieces: Sequence[str]) -> list[list[str]]:
    step = SECTIONS_PER_MESSAGE
    return [list(pieces[i : i + step]) for i in range(0, len(pieces), step)] or [[" "]]


def _message(pieces: Sequence[str]) -> SlackMessage:
    return SlackMessage(text="\n\n".join(pieces), blocks=tuple(_section(p) for p in pieces))


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text or " "}}


def footer(answer: Answer, answer_id: str) -> tuple[str, list[Block]]:
    """What follows an answer's text: sources, freshness, 👍/👎 (as mrkdwn text and as blocks)."""
    lines: list[str] = []
    blocks: list[Block] = []
    sources = sources_text(answer.citations)
    if sources:
        lines.append(sources)
        blocks.append(_section(sources))
    context = context_text(answer)
    if context:
        lines.append(context)
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    if answer_id:
        blocks.append(feedback_block(answer_id))
    return "\n".join(lines), blocks


def sources_text(citations: Sequence[Citation]) -> str:
    """`*Sources*` and one linked label per cited location (first MAX_SOURCES)."""
    seen: dict[tuple[str, str], Citation] = {}
    for c in citations:
        seen.setdefault((c.repo, c.label), c)
    if not seen:
        return ""
    repos = {c.repo for c in seen.values()}
    lines = ["*Sources*"]
    size = len(lines[0])
    shown = 0
    for c in list(seen.values())[:MAX_SOURCES]:
        where = f" ({escape(c.repo)})" if len(repos) > 1 else ""
        symbol = f" `{escape(c.symbol[:80])}`" if c.symbol else ""
        line = f"• {link(c.label, c.url)}{symbol}{where}{citation_note(c, _note_link)}"
        if size + len(line) + 40 > SECTION_CHARS:  # keep room for the "more" line
            break
        lines.append(line)
        size += len(line) + 1
        shown += 1
    if len(seen) > shown:
        lines.append(f"_…and {len(seen) - shown} more_")
    return "\n".join(lines)


def context_text(answer: Answer) -> str:
    """The freshness footer: which commit of which repository the answer comes from."""
    parts = [f.describe() for f in answer.freshness]
    if answer.mode == "extractive":
        parts.append("excerpts only (no language model configured)")
    text = " · ".join(parts)
    if len(text) > CONTEXT_CHARS:
        text = text[: CONTEXT_CHARS - 1] + "…"
    return escape(text)


def feedback_block(answer_id: str) -> Block:
    def button(action_id: str, label: str) -> Block:
        return {
            "type": "button",
            "action_id": action_id,
            "value": answer_id,
            "text": {"type": "plain_text", "text": label, "emoji": True},
        }

    return {
        "type": "actions",
        "block_id": FEEDBACK_BLOCK,
        "elements": [button(VOTE_UP, ":+1: Helpful"), button(VOTE_DOWN, ":-1: Not helpful")],
    }


def _note_link(label: str, url: str) -> str:
    return link(escape(label), url)
