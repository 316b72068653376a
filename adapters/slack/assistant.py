"""Slack's AI-app pane (Agents & AI Apps) through Bolt's `Assistant` middleware.

- `assistant_thread_started`: a greeting naming what can be searched from here, and up
  to four suggested prompts drawn from the index (`bot.answer.suggestions`).
- a message in a pane thread: the status line shows at once ("codecite is searching…",
  then the core's progress), the first question titles the thread, the thread's earlier
  turns go to the core as the conversation, and the answer is posted in the thread.
- `assistant_thread_context_changed`: the channel the user now views is kept with
  Bolt's thread context store (by default in the metadata of the bot's first message in
  the thread, so every process reads the same); the answer's scope follows it
  (`assistant_pane.pane_context`).

Messages in other DM threads are not the pane's: they go on to the ordinary handlers
(`others`), so a workspace without the feature works as before. Which thread is the
pane's may take a read of Slack (`PaneThreads`), so it is decided after the
acknowledgement, on the intake, like everything else these listeners do. Duplicates are
claimed with the same keys as the handlers use, so no message is answered twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from functools import partial
from typing import Any

from slack_bolt import App, BoltContext
from slack_bolt.context.get_thread_context import GetThreadContext
from slack_bolt.context.save_thread_context import SaveThreadContext
from slack_bolt.context.say import Say
from slack_bolt.context.set_status import SetStatus
from slack_bolt.context.set_suggested_prompts import SetSuggestedPrompts
from slack_bolt.context.set_title import SetTitle
from slack_bolt.middleware.assistant import Assistant
from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError

from adapters.common.dedupe import EventDedupe
from adapters.common.errors import user_facing
from adapters.slack.assistant_pane import (
    PROMPTS_TITLE,
    SEARCHING,
    STATUS_INTERVAL,
    PaneThreads,
    StatusLine,
    greeting,
    pane_context,
    prompts_payload,
    title_of,
    viewed_channel,
)
from adapters.slack.conversations import ConversationTypes
from adapters.slack.events import PLATFORM, Incoming, parse_event
from adapters.slack.handlers import SYNTAX
from adapters.slack.history import BotIdentity, load_thread
from adapters.slack.intake import Intake
from adapters.slack.outbox import Outbox, error_code
from adapters.slack.render import SlackMessage, render_answer, render_text
from adapters.slack.streamer import SlackStreamer, Undelivered
from bot.answer.streaming import AnswerStream
from bot.answer.suggestions import Prompt, suggested_prompts
from bot.core import Context, Core
from bot.errors import RateLimited
from bot.models import Answer, Turn
from bot.runtime.queue import in_line

log = logging.getLogger(__name__)

STATUS_TIMEOUT = 5  # seconds; a status is not worth waiting for


class SlackAssistant:
    def __init__(
        self,
        core: Core,
        client: WebClient,
        *,
        dedupe: EventDedupe,
        conversations: ConversationTypes,
        intake: Intake,
        others: Callable[[dict[str, Any], BotIdentity], None],
        status_interval: float = STATUS_INTERVAL,
    ) -> None:
        """`others(body, bot)`: a threaded DM message that is not the pane's."""
        self.core = core
        self.intake = intake
        self._others = others
        self.outbox = Outbox(client)
        self.threads = PaneThreads(client)
        self.conversations = conversations
        self._client = client
        # Statuses go without the client's retries: a 429 must not hold the answer back.
        self._status_client = WebClient(
            token=client.token, base_url=client.base_url, timeout=STATUS_TIMEOUT, retry_handlers=[]
        )
        self._status_interval = status_interval
        self._streamer = SlackStreamer(client, self.outbox)
        self._dedupe = dedupe
        self._pending: set[Future[None]] = set()
        self._lock = threading.Lock()

    def register(self, app: App) -> None:
        assistant = Assistant(logger=log)
        assistant.thread_started(self.on_started)
        assistant.thread_context_changed(self.on_context_changed)
        assistant.user_message(self.on_message)
        app.assistant(assistant)

    def close(self) -> None:
        """Finish the answers already accepted (the dedupe store is the handlers' to close)."""
        with self._lock:
            pending = list(self._pending)
        wait(pending)

    # -- a new pane thread: greeting and suggested prompts -------------------------------------

    def on_started(
        self,
        body: dict[str, Any],
        say: Say,
        set_suggested_prompts: SetSuggestedPrompts,
    ) -> None:
        self.intake.later(self._greet, body, say, set_suggested_prompts)

    def _greet(
        self, body: dict[str, Any], say: Say, set_suggested_prompts: SetSuggestedPrompts
    ) -> None:
        thread = (body.get("event") or {}).get("assistant_thread") or {}
        channel, thread_ts = str(thread.get("channel_id") or ""), str(thread.get("thread_ts") or "")
        if not channel or not thread_ts:
            return
        self.threads.started(channel, thread_ts)
        if not self._claim(f"{PLATFORM}:pane:{channel}:{thread_ts}", _event_key(body)):
            return
        dm = self._dm_context(str(body.get("team_id") or ""), channel, str(thread.get("user_id")))
        text, prompts = self._welcome(dm, viewed_channel(thread.get("context")))
        message = render_text(text)[0]
        try:
            say(text=message.text, blocks=list(message.blocks))
            if prompts:
                set_suggested_prompts(prompts=prompts_payload(prompts), title=PROMPTS_TITLE)
        except (SlackClientError, OSError) as exc:
            log.warning("could not greet in pane thread %s: %s", channel, error_code(exc))

    def _welcome(self, dm: Context, viewed: str) -> tuple[str, list[Prompt]]:
        try:
            repo_map = self.core.repo_map(None, self._pane_ctx(dm, viewed))
        except Exception as exc:  # noqa: BLE001 -- every failure becomes a sentence for the user
            return user_facing(exc), []
        return greeting(repo_map), suggested_prompts(repo_map)

    # -- the user moved to another channel -----------------------------------------------------

    def on_context_changed(
        self, body: dict[str, Any], save_thread_context: SaveThreadContext
    ) -> None:
        self.intake.later(self._keep_context, body, save_thread_context)

    def _keep_context(self, body: dict[str, Any], save_thread_context: SaveThreadContext) -> None:
        thread = (body.get("event") or {}).get("assistant_thread") or {}
        context = thread.get("context")
        if not isinstance(context, dict) or not context.get("channel_id"):
            return
        try:
            save_thread_context(context)
        except (SlackClientError, OSError) as exc:
            # The previous context stays: answers keep the scope they had.
            log.warning("could not keep the pane's thread context: %s", error_code(exc))

    # -- a message in a pane thread ------------------------------------------------------------

    def in_pane(self, body: dict[str, Any]) -> bool:
        """A threaded DM message is the pane's only in a pane thread; a thread not seen
        starting costs one read of its parent, once (so never before the ack)."""
        event = body.get("event") or {}
        channel, thread_ts = str(event.get("channel") or ""), str(event.get("thread_ts") or "")
        return bool(channel and thread_ts) and self.threads.is_pane(channel, thread_ts)

    def on_message(
        self,
        body: dict[str, Any],
        context: BoltContext,
        get_thread_context: GetThreadContext,
        set_title: SetTitle,
    ) -> None:
        """Any threaded DM message, acknowledged: the pane's or another DM thread's."""
        bot = BotIdentity(context.bot_user_id or "", context.bot_id or "")
        self.intake.later(self._take_message, body, bot, get_thread_context, set_title)

    def _take_message(
        self,
        body: dict[str, Any],
        bot: BotIdentity,
        get_thread_context: GetThreadContext,
        set_title: SetTitle,
    ) -> None:
        if not self.in_pane(body):
            self._others(body, bot)
            return
        incoming = parse_event(body, bot, answer_bots=self.core.config.answer_bots)
        if incoming is None or not incoming.thread_ts or not self._claim(*incoming.keys()):
            return
        status = self._status_line(incoming)
        status.show(SEARCHING)  # first: reading the thread takes round trips
        turns = _conversation(
            load_thread(
                self._client, incoming.channel, incoming.thread_ts, before_ts=incoming.ts, bot=bot
            ).turns
        )
        if not any(turn.role == "user" for turn in turns):
            self._title(set_title, incoming.text)
        viewed = self._viewed(get_thread_context)
        try:
            position = self._submit(partial(self._answer, incoming, turns, viewed, status))
        except RateLimited as exc:  # the answer line is full
            self._post(incoming, render_text(exc.user_message), status)
            return
        if position:
            self._post(incoming, render_text(in_line(position)))

    def _answer(
        self, incoming: Incoming, turns: tuple[Turn, ...], viewed: str, status: StatusLine
    ) -> None:
        dm = self._dm_context(incoming.team, incoming.channel, incoming.user)
        try:
            ctx = self._pane_ctx(dm, viewed)
            if incoming.command is not None:
                result = self.core.run_command(incoming.command, ctx, SYNTAX)
                self._post(incoming, render_text(result.text), status)
                return
            stream = self._ask(incoming.text, ctx, turns, status.show)
            self._post_answer(
                incoming.channel,
                incoming.thread_ts,
                team_id=incoming.team,
                user_id=incoming.user,
                stream=stream,
                status=status,
            )
        except Exception as exc:  # noqa: BLE001 -- every failure becomes a sentence for the user
            self._post(incoming, render_text(user_facing(exc)), status)

    def _ask(
        self, text: str, ctx: Context, turns: tuple[Turn, ...], progress: Callable[[str], None]
    ) -> AnswerStream:
        """The core's answer; its stages ("searching billing…") feed the status line."""
        return self.core.ask_stream(text, ctx, turns, progress=progress)

    def _post_answer(
        self,
        channel: str,
        thread_ts: str,
        *,
        team_id: str,
        user_id: str,
        stream: AnswerStream,
        status: StatusLine,
    ) -> None:
        """The one place an answer reaches the pane: streamed into the thread as it is
        written (`core.settings.stream_answers`), else posted whole; the status line ends
        before the first text, so no late status shows under it."""
        if not self.core.settings.stream_answers:
            answer = _drained(stream)
            status.done()
            messages = render_answer(answer, answer_id=answer.answer_id)
            try:
                self.outbox.post(channel, messages, thread_ts=thread_ts)
            except (SlackClientError, OSError) as exc:
                log.error("could not post the answer in %s: %s", channel, error_code(exc))
                status.clear()
            return
        if not stream.streamed:
            status.done()  # posted whole at once: no status may follow it
        try:
            self._streamer.deliver(
                channel,
                thread_ts,
                team_id=team_id,
                user_id=user_id,
                stream=stream,
                on_first_text=status.done,
            )
        except Undelivered as exc:
            log.error("could not post the answer in %s: %s", channel, error_code(exc.cause))
            status.clear()

    # -- helpers -------------------------------------------------------------------------------

    def _post(
        self, incoming: Incoming, messages: list[SlackMessage], status: StatusLine | None = None
    ) -> None:
        if status is not None:
            status.done()
        try:
            self.outbox.post(incoming.channel, messages, thread_ts=incoming.thread_ts)
        except (SlackClientError, OSError) as exc:
            log.error("could not post in %s: %s", incoming.channel, error_code(exc))
            if status is not None:
                status.clear()

    def _status_line(self, incoming: Incoming) -> StatusLine:
        set_status = SetStatus(self._status_client, incoming.channel, incoming.thread_ts)
        return StatusLine(set_status, interval=self._status_interval)

    def _title(self, set_title: SetTitle, question: str) -> None:
        try:
            set_title(title_of(question))
        except (SlackClientError, OSError) as exc:
            log.warning("assistant.threads.setTitle failed: %s", error_code(exc))

    def _viewed(self, get_thread_context: GetThreadContext) -> str:
        try:
            return viewed_channel(get_thread_context())
        except (SlackClientError, OSError) as exc:  # then the DM's own scope applies
            log.warning("could not read the pane's thread context: %s", error_code(exc))
            return ""

    def _pane_ctx(self, dm: Context, viewed: str) -> Context:
        """Whose scope an answer in the pane gets; PermissionDenied when the DM rules refuse."""
        self.core.scope_for(dm)  # the DM rules first: the allowlist may refuse
        return pane_context(dm, viewed, self.core.channel_config(viewed))

    def _dm_context(self, team: str, channel: str, user: str) -> Context:
        incoming = Incoming("dm", team, channel, user, ts="", thread_ts="", text="")
        conversation = self.conversations.lookup(channel)
        return incoming.context(conversation, is_admin=self.core.is_listed_admin(user))

    def _submit(self, job: Callable[[], None]) -> int:
        ticket = self.core.submit(job)
        with self._lock:
            self._pending.add(ticket.future)
        ticket.future.add_done_callback(self._done)
        return ticket.position

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)

    def _claim(self, *keys: str) -> bool:
        return self._dedupe.claim(*keys)  # never raises: see adapters.common.dedupe


def _event_key(body: dict[str, Any]) -> str:
    event_id = str(body.get("event_id") or "")
    return f"{PLATFORM}:event:{event_id}" if event_id else ""


def _conversation(turns: tuple[Turn, ...]) -> tuple[Turn, ...]:
    """The thread's turns from the first question on: the greeting is no part of it."""
    for i, turn in enumerate(turns):
        if turn.role == "user":
            return turns[i:]
    return ()


def _drained(stream: AnswerStream) -> Answer:
    for _ in stream:
        pass
    return stream.answer
