"""What the AI-app pane needs besides Bolt: which threads are the pane's, its status line,
thread titles, prompts in Slack's shape, the greeting, and whose scope an answer gets.

Which threads are the pane's: Bolt's `Assistant` takes every threaded message in a DM,
but a DM thread outside the pane (Messages tab, a workspace without the feature) must
stay with the ordinary handlers. A pane thread's parent is a message of subtype
`assistant_app_thread`; threads seen starting are remembered, others are asked of
Slack once (`conversations.replies`, the parent only) and remembered, bounded.

Scope: the pane is the user's DM with the bot, so the DM rules apply (the allowlist
first). When the channel the user is viewing (the thread context Slack sends on
`assistant_thread_started` and `assistant_thread_context_changed`) has an entry of its
own in codecite.toml, its repositories are the answer's scope: the user reads that
channel and could ask there with the same scope. Otherwise the DM's scope applies.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from adapters.slack.outbox import error_code
from bot.answer.suggestions import Prompt
from bot.config import ChannelConfig
from bot.core import Context
from bot.models import Answer

log = logging.getLogger(__name__)

PANE_SUBTYPE = "assistant_app_thread"
REMEMBERED = 4096
SEARCHING = "searching…"
STATUS_INTERVAL = 1.0  # seconds between two status updates of one answer
STATUS_CHARS = 120
TITLE_CHARS = 60
PROMPTS_TITLE = "Try asking"
_SPACES = re.compile(r"\s+")
_MARKUP = re.compile(r"<[@#!][^>]*>")  # mentions and special links: nothing for a title


class PaneThreads:
    """(channel, thread_ts) -> whether it is an assistant (pane) thread; thread-safe."""

    def __init__(self, client: WebClient, *, size: int = REMEMBERED) -> None:
        self._client = client
        self._size = size
        self._known: OrderedDict[tuple[str, str], bool] = OrderedDict()
        self._lock = threading.Lock()

    def started(self, channel: str, thread_ts: str) -> None:
        self._remember((channel, thread_ts), True)

    def is_pane(self, channel: str, thread_ts: str) -> bool:
        key = (channel, thread_ts)
        with self._lock:
            known = self._known.get(key)
        if known is not None:
            return known
        try:
            page = self._client.conversations_replies(channel=channel, ts=thread_ts, limit=1)
        except (SlackClientError, OSError) as exc:
            # Not remembered: the next message asks again. Until then the DM handlers answer.
            log.warning("could not tell whether %s/%s is a pane thread: %s", *key, error_code(exc))
            return False
        messages = page.get("messages") or []
        parent = messages[0] if messages and messages[0].get("ts") == thread_ts else {}
        pane = parent.get("subtype") == PANE_SUBTYPE
        self._remember(key, pane)
        return pane

    def _remember(self, key: tuple[str, str], pane: bool) -> None:
        with self._lock:
            self._known[key] = pane
            self._known.move_to_end(key)
            while len(self._known) > self._size:
                self._known.popitem(last=False)


class StatusLine:
    """The pane's status under one question ("codecite is searching billing…").

    At most one update per `interval`: a status arriving sooner waits (the newest one
    wins) and is sent when the interval is up, unless the answer came first (`done`).
    Best effort: a failure loses only the status, and a 429 or an unreachable Slack
    silences it for this answer, which must never wait for a status. Slack clears the
    status itself when the answer is posted; `clear` is for when it could not be.
    """

    def __init__(
        self,
        set_status: Callable[[str], object],
        *,
        interval: float = STATUS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        later: Callable[[float, Callable[[], None]], object] | None = None,
    ) -> None:
        self._set_status = set_status
        self._interval = interval
        self._clock = clock
        self._later = later or _timer
        self._last = ""  # shown now
        self._waiting = ""  # to show when the interval is up
        self._sent_at: float | None = None
        self._scheduled = False
        self._over = False  # answered, or silenced
        self._lock = threading.Lock()  # held while sending: `done` waits for a send under way

    def show(self, progress: str) -> None:
        text = status_text(progress)
        with self._lock:
            if self._over or not text or text == self._last:
                return
            since = None if self._sent_at is None else self._clock() - self._sent_at
            wait = 0.0 if since is None else self._interval - since
            if wait <= 0:
                self._send(text)
                return
            self._waiting = text
            if self._scheduled:
                return
            self._scheduled = True
        self._later(wait, self._flush)

    def done(self) -> None:
        """The answer is about to be posted: no status may follow it."""
        with self._lock:
            self._over = True

    def clear(self) -> None:
        """Take the status down (the answer could not be posted, so Slack will not)."""
        with self._lock:
            shown, self._over = self._last, False
            if shown:
                self._send("")
            self._over = True

    def _flush(self) -> None:
        with self._lock:
            text, self._waiting, self._scheduled = self._waiting, "", False
            if text and not self._over and text != self._last:
                self._send(text)

    def _send(self, text: str) -> None:
        """Under the lock."""
        self._last, self._sent_at = text, self._clock()
        try:
            self._set_status(text)
        except SlackApiError as exc:
            log.warning("assistant.threads.setStatus failed: %s", error_code(exc))
            self._over = self._over or error_code(exc) == "ratelimited"
        except (SlackClientError, OSError) as exc:  # Slack unreachable: no more tries
            log.warning("assistant.threads.setStatus failed: %s", error_code(exc))
            self._over = True


def _timer(delay: float, job: Callable[[], None]) -> threading.Timer:
    timer = threading.Timer(delay, job)
    timer.daemon = True
    timer.start()
    return timer


def status_text(progress: str) -> str:
    """Slack shows "<app name> <status>": "searching billing…" becomes "is searching billing…"."""
    text = _SPACES.sub(" ", progress).strip()
    if not text:
        return ""
    if not text.startswith("is "):
        text = f"is {text}"
    return _cut(text, STATUS_CHARS)


def title_of(question: str) -> str:
    """A thread title from a question: its first words on one line, mentions dropped."""
    text = _SPACES.sub(" ", _MARKUP.sub(" ", question)).strip()
    return _cut(text, TITLE_CHARS) or "Question"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:.") + "…"


def prompts_payload(prompts: Sequence[Prompt]) -> list[dict[str, str]]:
    """Prompts as `assistant.threads.setSuggestedPrompts` takes them (four at most)."""
    return [{"title": p.title, "message": p.message} for p in prompts[:4]]


def greeting(repo_map: Answer) -> str:
    """The first message of a pane thread (markdown): what codecite can search from here."""
    repos = list(dict.fromkeys(f.repo for f in repo_map.freshness))
    if not repos:
        return (
            "Hi! Nothing is indexed that I can search from here yet; an admin can add "
            "repositories to codecite.toml."
        )
    named = ", ".join(f"**{r}**" for r in repos[:5])
    more = f" and {len(repos) - 5} more" if len(repos) > 5 else ""
    return (
        f"Hi! Ask me about the code in {named}{more}: I answer with the exact lines, "
        "linked. Pick a suggestion or ask in your own words; follow-ups here keep the "
        "conversation."
    )


def viewed_channel(thread_context: Mapping[str, Any] | None) -> str:
    """The channel the user is viewing, from an assistant thread context ("" if none)."""
    if not thread_context:
        return ""
    return str(thread_context.get("channel_id") or "")


def pane_context(dm: Context, viewed: str, viewed_config: ChannelConfig | None) -> Context:
    """The context an answer in the pane gets (see the module docstring): the DM's, or
    the viewed channel's when that channel has an entry of its own."""
    if viewed and viewed != dm.channel and viewed_config is not None:
        return replace(dm, channel=viewed)
    return dm
