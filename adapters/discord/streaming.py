"""An answer shown as the model writes it: one reply, posted early, then edited.

The core streams in a worker of the answer queue (`Core.ask_stream`); its safe
pieces reach the event loop as they come. The first message goes out once the
first sentence is complete or about a second after the question arrived,
whichever is first, and never empty: with no text by then it waits for the
first text. After that the messages follow the text at most once a second each
(`live.LiveMessages`); past a message's size the answer continues in a new one
with any code block closed and reopened. The final state is the whole answer as
a non-streamed reply renders it (links, freshness, vote buttons), from
`answer.text` even where that parted from what was streamed. A model stream
that breaks leaves its text, ended by the cut-off sentence (inside
`answer.text`); nothing is ever posted twice. An answer that comes in one piece
(no model) is posted once, complete, as without streaming: the worker holds the
first piece until a second one shows the answer is really being written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from adapters.common.errors import user_facing
from adapters.discord.feedback import vote_view
from adapters.discord.live import LiveMessages, Surface
from adapters.discord.render import quote_question, render_answer, render_partial, render_text
from adapters.discord.replies import OnWait, queued
from bot.commands import ASK, parse
from bot.core import Context, Core
from bot.models import Answer, Turn

log = logging.getLogger(__name__)

FIRST_WAIT = 1.0  # seconds after the question before a first partial answer is shown
_SENTENCE_END = re.compile(r"[.!?](\s|$)|\n")


@dataclass(frozen=True, slots=True)
class Streamed:
    """How a streamed reply ended: `answer` once the core finished, `error` if it raised
    before any message was posted (the caller replies as it does without streaming)."""

    answer: Answer | None = None
    error: BaseException | None = None


def streaming_on(core: Core) -> bool:
    """Whether answers stream (`CODECITE_STREAM`); off, they are posted once, complete."""
    return core.settings.stream_answers


def streams(core: Core, text: str, conversation: Sequence[Turn]) -> bool:
    """Whether a message is answered by streaming: a question (not a command), streaming on."""
    return streaming_on(core) and (bool(conversation) or parse(text).spec is ASK)


def question_of(text: str, conversation: Sequence[Turn]) -> str:
    """What `answer_reply`/`command_reply` would ask for this text."""
    return text if conversation else parse(text).argument


class _Feed:
    """Pieces handed over from the worker thread, and a wake-up for the reader."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.text = ""
        self.changed = asyncio.Event()

    def push(self, piece: str) -> None:  # called in the worker thread
        self._loop.call_soon_threadsafe(self._arrive, piece)

    def _arrive(self, piece: str) -> None:
        self.text += piece
        self.changed.set()


async def stream_reply(
    core: Core,
    question: str,
    ctx: Context,
    surface: Surface,
    *,
    conversation: Sequence[Turn] = (),
    quote: str = "",
    on_wait: OnWait | None = None,
    on_posted: Callable[[], Awaitable[object]] | None = None,
    what: str = "an answer",
) -> Streamed:
    """Answer `question` into `surface` as it is written; `quote` is echoed above it (/ask).
    `what` names the reply in the log."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    feed = _Feed(loop)

    def work() -> Answer:
        stream = core.ask_stream(question, ctx, tuple(conversation))
        pieces = iter(stream)
        first = next(pieces, None)
        second = next(pieces, None) if first is not None else None
        if first is None or second is None:
            return stream.answer  # one piece (no model): nothing to stream, posted once whole
        feed.push(first + second)
        for piece in pieces:
            feed.push(piece)
        return stream.answer

    task = asyncio.ensure_future(queued(core, work, on_wait))
    task.add_done_callback(lambda _: feed.changed.set())
    live = LiveMessages(surface, what)
    while not task.done():
        timeout = _timeout(live, feed.text, quote, started + FIRST_WAIT, loop.time())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(feed.changed.wait(), timeout)
        feed.changed.clear()
        if task.done() or not feed.text.strip():
            continue
        first = not live.posted
        if first and not _first_due(feed.text, started + FIRST_WAIT, loop.time()):
            continue
        await live.show(render_partial(feed.text, question=quote))
        if first and live.posted and on_posted is not None:
            await on_posted()
    try:
        answer = task.result()
    except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
        if not live.posted:
            return Streamed(error=exc)
        await _finish_with_error(live, feed.text, quote, exc)
        return Streamed(error=None)
    await live.show(
        render_answer(answer, question=quote, streamed=True),
        view=vote_view(answer.answer_id) if answer.answer_id else None,
        wait=True,
    )
    await surface.attach(answer.attachments)
    return Streamed(answer=answer)


def _first_due(text: str, deadline: float, now: float) -> bool:
    return bool(_SENTENCE_END.search(text)) or now >= deadline


def _timeout(
    live: LiveMessages, text: str, quote: str, deadline: float, now: float
) -> float | None:
    """How long to wait for more text before showing what there is (None: until it comes)."""
    if not text.strip() or live.failed:
        return None  # nothing to show yet (never an empty message), or nowhere to show it
    if not live.posted:
        return max(0.0, deadline - now)
    due = live.next_due(render_partial(text, question=quote))
    return None if due is None else max(0.0, due - now)


async def _finish_with_error(live: LiveMessages, text: str, quote: str, exc: BaseException) -> None:
    """Text was shown and then the core failed: the text stays, ended by one sentence."""
    body = f"{text.rstrip()}\n\n{user_facing(exc)}"
    if quote.strip():
        body = f"{quote_question(quote)}\n\n{body}"
    pieces = render_text(body, streamed=True)
    await live.show(pieces, wait=True)
