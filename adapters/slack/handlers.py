"""Bolt listeners: acknowledge at once, claim the event, show progress, answer in the background.

Each listener runs on Bolt's listener threads after (events) or right after
calling (commands, buttons) `ack()`, and hands the rest at once to the intake
(`adapters.slack.intake`): claiming, reactions, reading the thread, looking the
conversation up may all wait (a rate limit, a database away), and none of it may
hold a thread another request's acknowledgement needs. The slow part, answering,
runs in the core's bounded answer queue. Questions (mentions, DMs, follow-ups, `/codecite ask`) are
streamed with `SlackStreamer` (`Core.ask_stream`) unless `stream_answers` is off,
then posted whole (`Core.ask`). The 👀 on a question goes as soon as answer text
shows. Every failure the user could notice is turned into one sentence with an
incident id (`adapters.common.errors.user_facing`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from functools import partial
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError

from adapters.common.dedupe import EventDedupe
from adapters.common.errors import result_text, user_facing
from adapters.slack.confirmations import FORGETTING, ConfirmButtons, rendered
from adapters.slack.conversations import ConversationTypes
from adapters.slack.events import Incoming, SlashCommand, parse_event
from adapters.slack.history import (
    NO_HISTORY,
    AnsweredThreads,
    BotIdentity,
    ThreadHistory,
    read_thread,
)
from adapters.slack.intake import Intake
from adapters.slack.outbox import NOT_POSTABLE, Outbox, error_code
from adapters.slack.render import (
    CONFIRM_ACTION,
    VOTE_DOWN,
    VOTE_UP,
    SlackMessage,
    quote_question,
    render_answer,
    render_text,
)
from adapters.slack.streamer import SlackStreamer, Undelivered
from bot.answer.streaming import AnswerStream
from bot.commands import ASK, FORGET, REINDEX, Command, Syntax, forget_target
from bot.core import CommandResult, Context, Core
from bot.errors import BotError, RateLimited
from bot.models import Turn
from bot.runtime.queue import in_line

log = logging.getLogger(__name__)

COMMAND = "/codecite"
SYNTAX = Syntax(
    COMMAND + " {}",
    "mention me with a question, DM me, or use `{ask}`",
    confirm="the button below, or `{command}`",
)
PROGRESS_REACTION = "eyes"
WORKING = ":mag: Looking into it…"
REINDEXING = ":arrows_counterclockwise: Reindexing; the result follows here."
THANKS = "Thanks for the feedback!"
UNKNOWN_ANSWER = "That answer is no longer on record, so the vote was not stored."


class SlackHandlers:
    def __init__(
        self, core: Core, client: WebClient, *, dedupe: EventDedupe, intake: Intake
    ) -> None:
        self.core = core
        self.intake = intake
        self.outbox = Outbox(client)
        self.streamer = SlackStreamer(client, self.outbox)
        self._client = client
        self._dedupe = dedupe
        self._pending: set[Future[None]] = set()
        self._pending_lock = threading.Lock()
        self._threads = AnsweredThreads()
        self.conversations = ConversationTypes(client)
        self.confirmations = ConfirmButtons(
            core, self.outbox, self.conversations, self._track, SYNTAX
        )

    def register(self, app: App) -> None:
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)
        app.event("channel_shared")(self.on_sharing_changed)
        app.event("channel_unshared")(self.on_sharing_changed)
        app.command(COMMAND)(self.on_command)
        app.action(VOTE_UP)(self.acked(self.on_vote))
        app.action(VOTE_DOWN)(self.acked(self.on_vote))
        app.action(CONFIRM_ACTION)(self.acked(self.confirmations.on_click))

    def acked(self, work: Callable[[dict[str, Any], dict[str, Any]], None]) -> Callable[..., None]:
        """A button's listener: acknowledge, then `work(body, action)` on the intake."""

        def listener(ack: Ack, body: dict[str, Any], action: dict[str, Any]) -> None:
            ack()
            self.intake.later(work, body, action)

        return listener

    def close(self) -> None:
        """Finish the answers this adapter accepted (they were promised), then close."""
        with self._pending_lock:
            pending = list(self._pending)
        wait(pending)
        self._dedupe.close()

    def _submit(self, job: Callable[[], None]) -> int:
        """Queue answer work; its place in line (0 = starting now). RateLimited when full."""
        ticket = self.core.submit(job)
        self._track(ticket.future)
        return ticket.position

    def _track(self, future: Future[Any]) -> None:
        with self._pending_lock:
            self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: Future[Any]) -> None:
        with self._pending_lock:
            self._pending.discard(future)

    # -- events: mentions, DMs, thread follow-ups ---------------------------------------------

    def on_event(self, body: dict[str, Any], context: BoltContext) -> None:
        """Runs after Bolt acknowledged the event: the rest on the intake."""
        bot = BotIdentity(context.bot_user_id or "", context.bot_id or "")
        self.intake.later(self.take_event, body, bot)

    def take_event(self, body: dict[str, Any], bot: BotIdentity) -> None:
        """A mention, DM or thread follow-up, acknowledged: claim it, show 👀, queue it."""
        incoming = parse_event(body, bot, answer_bots=self.core.config.answer_bots)
        if incoming is None or not self._wanted(incoming):
            return
        if not self._claim(*incoming.keys()):
            log.debug("event %s already claimed", incoming.keys()[0])
            return
        followup = incoming.kind == "followup"
        if not followup:  # progress first: reading the thread takes a round trip
            self.outbox.react(incoming.channel, incoming.ts, PROGRESS_REACTION)
        history = self._history(incoming, bot)
        if followup:
            if not history.bot_answered:
                return  # someone else's thread
            self.outbox.react(incoming.channel, incoming.ts, PROGRESS_REACTION)
        try:
            position = self._submit(partial(self._answer, incoming, history.turns))
        except RateLimited as exc:
            self._deliver(incoming, render_text(exc.user_message))
            return
        if position:
            self._note(incoming, in_line(position))

    def on_sharing_changed(self, event: dict[str, Any]) -> None:
        """Another organisation joined or left a channel: look its kind up again."""
        self.conversations.forget(str(event.get("channel") or ""))

    def _history(self, incoming: Incoming, bot: BotIdentity) -> ThreadHistory:
        if not incoming.in_thread:
            return NO_HISTORY
        history = read_thread(
            self._client, incoming.channel, incoming.thread_ts, before_ts=incoming.ts, bot=bot
        )
        if history is not None:
            return history
        # Slack could not be read: answer without history where this process answered before.
        answered = self._threads.answered(incoming.channel, incoming.thread_ts)
        return ThreadHistory(bot_answered=answered, turns=())

    def _wanted(self, incoming: Incoming) -> bool:
        if incoming.kind != "followup":
            return True
        channel = self.core.channel_config(incoming.channel)
        return channel is None or channel.threads

    def _answer(self, incoming: Incoming, history: tuple[Turn, ...]) -> None:
        conversation = self.conversations.lookup(incoming.channel)
        ctx = incoming.context(conversation, is_admin=self.core.is_listed_admin(incoming.user))
        try:
            if incoming.command is None and self.core.settings.stream_answers:
                self._stream(incoming, self.core.ask_stream(incoming.text, ctx, history))
                return
            messages = self._reply(incoming, ctx, history)
        except Exception as exc:  # noqa: BLE001 -- every failure becomes a sentence for the user
            messages = render_text(user_facing(exc))
        self._deliver(incoming, messages)

    def _stream(self, incoming: Incoming, stream: AnswerStream) -> None:
        """Stream the answer into the thread (a flat DM: one message, edited)."""
        eyes = [True]

        def shown() -> None:  # the text says it is being answered now: 👀 has done its job
            eyes[0] = False
            self.outbox.unreact(incoming.channel, incoming.ts, PROGRESS_REACTION)

        try:
            self.streamer.deliver(
                incoming.channel,
                incoming.reply_ts,
                team_id=incoming.recipient_team,
                user_id=incoming.user,
                stream=stream,
                on_first_text=shown,
            )
            if incoming.reply_ts:
                self._threads.remember(incoming.channel, incoming.reply_ts)
        except Undelivered as exc:
            log.error("could not post the answer in %s: %s", incoming.channel, exc)
        finally:
            if eyes[0]:
                self.outbox.unreact(incoming.channel, incoming.ts, PROGRESS_REACTION)

    def _reply(
        self, incoming: Incoming, ctx: Context, history: tuple[Turn, ...]
    ) -> list[SlackMessage]:
        command = incoming.command
        if command is None:
            answer = self.core.ask(incoming.text, ctx, history)
            return render_answer(answer, answer_id=answer.answer_id)
        result = self.core.run_command(command, ctx, SYNTAX)
        if result.later is not None:  # `forget <repo> yes`: the report follows in the thread
            self._track(result.later)
            result.later.add_done_callback(partial(self._deliver_later, incoming))
            return render_text(FORGETTING.format(forget_target(command.argument)[0]))
        return rendered(result)

    def _deliver_later(self, incoming: Incoming, later: Future[str]) -> None:
        self._deliver(incoming, render_text(result_text(later)))

    def _note(self, incoming: Incoming, text: str) -> None:
        """A short progress note in the thread; failing to post it loses nothing."""
        try:
            self.outbox.post(incoming.channel, render_text(text), thread_ts=incoming.reply_ts)
        except (SlackClientError, OSError) as exc:
            log.warning("could not post a note in %s: %s", incoming.channel, error_code(exc))

    def _deliver(self, incoming: Incoming, messages: list[SlackMessage]) -> None:
        try:
            self.outbox.post(incoming.channel, messages, thread_ts=incoming.reply_ts)
            if incoming.reply_ts:
                self._threads.remember(incoming.channel, incoming.reply_ts)
        except (SlackClientError, OSError) as exc:
            log.error("could not post the answer in %s: %s", incoming.channel, error_code(exc))
        finally:
            self.outbox.unreact(incoming.channel, incoming.ts, PROGRESS_REACTION)

    # -- the slash command ---------------------------------------------------------------------

    def on_command(self, ack: Ack, command: dict[str, Any]) -> None:
        cmd = SlashCommand.from_payload(command)
        note = _ack_note(cmd.command)
        if note:
            ack(text=note, response_type="ephemeral")
        else:  # cheap, or a question: the reply itself follows at once
            ack()
        self.intake.later(self._take_command, cmd)

    def _take_command(self, cmd: SlashCommand) -> None:
        if cmd.trigger_id and not self._claim(f"slack:command:{cmd.trigger_id}"):
            return
        if cmd.command.spec.admin_only:  # reindex, forget: the ingest line, not an answer worker
            self._run_command(cmd)
            return
        try:
            position = self._submit(partial(self._run_command, cmd))
        except RateLimited as exc:
            self.outbox.respond(cmd.response_url, render_text(exc.user_message), in_channel=False)
            return
        if position:
            self.outbox.respond(cmd.response_url, render_text(in_line(position)), in_channel=False)

    def _run_command(self, cmd: SlashCommand) -> None:
        conversation = self.conversations.lookup(cmd.channel)
        ctx = cmd.context(conversation, is_admin=self.core.is_listed_admin(cmd.user))
        streamed = cmd.command.spec is ASK and self.core.settings.stream_answers
        try:
            if streamed:
                self._stream_command(cmd, self.core.ask_stream(cmd.question, ctx))
                return
            result = self.core.run_command(cmd.command, ctx, SYNTAX)
        except Exception as exc:  # noqa: BLE001 -- every failure becomes a sentence for the user
            self.outbox.respond(cmd.response_url, render_text(user_facing(exc)), in_channel=False)
            return
        if result.later is not None:
            self._track(result.later)
            result.later.add_done_callback(partial(self._respond_later, cmd))
            return
        if result.answer is None:
            self._respond(cmd, result)
            return
        preface = quote_question(cmd.user, cmd.question)
        messages = render_answer(result.answer, answer_id=result.answer.answer_id, preface=preface)
        try:
            self.outbox.post(cmd.channel, messages, thread_ts=None, thread_rest=True)
        except (SlackClientError, OSError) as exc:
            if error_code(exc) not in NOT_POSTABLE:
                log.error("could not post the answer in %s: %s", cmd.channel, error_code(exc))
            # Not a member here (or a DM between others): the response_url still reaches it.
            self.outbox.respond(cmd.response_url, messages, in_channel=True)

    def _stream_command(self, cmd: SlashCommand, stream: AnswerStream) -> None:
        """In the channel under the quoted question, edited as it is written (no thread to
        stream into at top level); the rest of a long answer goes in its thread."""
        try:
            self.streamer.deliver(
                cmd.channel,
                None,
                team_id=cmd.team,
                user_id=cmd.user,
                stream=stream,
                preface=quote_question(cmd.user, cmd.question),
                rest_in_thread=True,
            )
        except Undelivered as exc:
            if error_code(exc.cause) not in NOT_POSTABLE:
                log.error("could not post the answer in %s: %s", cmd.channel, exc)
            # Not a member here (or a DM between others): the response_url still reaches it.
            self.outbox.respond(cmd.response_url, exc.messages, in_channel=True)

    def _respond(self, cmd: SlashCommand, result: CommandResult) -> None:
        messages = rendered(result)
        self.outbox.respond(cmd.response_url, messages, in_channel=not result.ephemeral)

    def _respond_later(self, cmd: SlashCommand, later: Future[str]) -> None:
        """A reindex report, once the ingest line has run it (on that line's thread)."""
        try:
            result = CommandResult(later.result())
        except Exception as exc:  # noqa: BLE001 -- every failure becomes a sentence for the user
            result = CommandResult(user_facing(exc), ephemeral=True)
        self._respond(cmd, result)

    # -- feedback buttons ----------------------------------------------------------------------

    def on_vote(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A 👍/👎 click, acknowledged (`acked`)."""
        vote = 1 if action.get("action_id") == VOTE_UP else -1
        voter = str((body.get("user") or {}).get("id") or "")
        try:
            known = self.core.record_vote(str(action.get("value") or ""), voter, vote)
            text = THANKS if known else UNKNOWN_ANSWER
        except (BotError, ValueError) as exc:
            text = user_facing(exc)
        self.outbox.respond(
            str(body.get("response_url") or ""), render_text(text), in_channel=False
        )

    # -- helpers -------------------------------------------------------------------------------

    def _claim(self, *keys: str) -> bool:
        return self._dedupe.claim(*keys)  # never raises: see adapters.common.dedupe


def _ack_note(command: Command) -> str:
    """What the slash command's ack says: nothing for cheap commands and for questions."""
    spec, (repo, confirmed) = command.spec, forget_target(command.argument)
    if spec.quick or (spec is FORGET and not confirmed):
        return ""
    if spec is FORGET:
        return FORGETTING.format(repo)
    return REINDEXING if spec is REINDEX else WORKING
