"""An answer delivered to Slack as it is written: one message that grows, then is complete.

`SlackStreamer(client, outbox).deliver(channel, thread_ts, team_id=, user_id=, stream=)`
takes an `AnswerStream` and returns the ts of the answer's message. It knows nothing
of events or commands, so every listener (mentions, DMs, slash commands, the assistant
pane) can use it. Choices:

- In a thread, Slack's chat streaming: `chat.startStream` with the first text (as soon
  as there is any), `chat.appendStream` at most once per APPEND_INTERVAL (Tier 4 is about
  100 calls a minute per workspace; one a second per answer leaves room for others),
  and `chat.stopStream` with the footer blocks (sources, freshness, 👍/👎). The streamed
  text is the answer's markdown, unlinked; then one `chat.update` replaces it with
  `render_answer`'s message (linked `path:Lx-Ly` citations, and `answer.text` where a
  late rewrite parted it from what was streamed) unless that is what was streamed.
- At top level (a flat DM, a slash command's answer in the channel) there is no thread
  to stream into, and where a workspace refuses streaming (`not_allowed`,
  `method_deprecated`, ...): one `chat.postMessage`, edited with `chat.update` at most
  once per EDIT_INTERVAL, the last edit being the whole answer. A workspace's refusal
  is remembered, so its later answers skip the attempt. A stream Slack ends early (it
  expires after a few minutes) carries on as edits of the same message.
- Rate limits: the WebClient's retry handler waits out `Retry-After`; the model is read
  on a thread of its own meanwhile, and what arrived goes out with the next call. Text
  a call could not deliver is sent again with the next one: nothing is lost, and there
  is never a second answer message.
- A whole answer (no model) is posted at once, as without streaming.
- A model stream that breaks ends with the cut-off sentence (it is in `answer.text`);
  any other failure after text was shown ends the message with one sentence; before
  any text was shown it is raised, for the caller to say so as it would anyway.
- An answer longer than one message puts its remaining messages in the thread (the
  first message's own thread with `rest_in_thread`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from adapters.common.errors import user_facing
from adapters.slack.mrkdwn import to_mrkdwn
from adapters.slack.outbox import NOT_POSTABLE, Outbox, error_code
from adapters.slack.render import Block, SlackMessage, footer, render_answer, render_text
from bot.answer.streaming import AnswerStream

log = logging.getLogger(__name__)

APPEND_INTERVAL = 1.0  # seconds between chat.appendStream calls of one answer
EDIT_INTERVAL = 1.0  # seconds between chat.update calls of one message
MAX_APPEND = 12_000  # Slack's limit on markdown_text per call
# Streaming refused for the whole workspace or token: do not ask again.
WORKSPACE_REFUSALS = frozenset(
    {"not_allowed", "method_deprecated", "not_allowed_token_type", "unknown_method"}
)


class Undelivered(Exception):
    """Nothing could be posted; `messages` is the whole answer, for another route."""

    def __init__(self, cause: SlackClientError | OSError, messages: list[SlackMessage]) -> None:
        super().__init__(error_code(cause))
        self.cause = cause
        self.messages = messages


class SlackStreamer:
    def __init__(
        self,
        client: WebClient,
        outbox: Outbox,
        *,
        append_interval: float = APPEND_INTERVAL,
        edit_interval: float = EDIT_INTERVAL,
    ) -> None:
        self._client = client
        self._outbox = outbox
        self._append_interval = append_interval
        self._edit_interval = edit_interval
        self._refused: set[str] = set()  # workspaces that refused streaming
        self._lock = threading.Lock()

    def deliver(
        self,
        channel: str,
        thread_ts: str | None,
        *,
        team_id: str,
        user_id: str,
        stream: AnswerStream,
        preface: str = "",
        rest_in_thread: bool = False,
        on_first_text: Callable[[], None] | None = None,
    ) -> str:
        """Post `stream` in `channel` (in `thread_ts`'s thread, or at top level when None).

        `team_id`/`user_id`: who asked (Slack streams to a recipient). `preface`: mrkdwn
        above the answer (a streamed thread shows it from the final update on).
        `on_first_text`: called once the first text is visible. Raises `Undelivered`
        when nothing could be posted, and what the stream raised before any text.
        """
        if not stream.streamed:
            return self._whole(channel, thread_ts, stream, preface, rest_in_thread)
        with self._lock:
            native = bool(thread_ts) and team_id not in self._refused
        recipient = (team_id, user_id)
        message = _Growing(
            self._client, self._outbox, channel, (thread_ts, preface), recipient, native=native
        )
        reader = _Reader(stream)
        try:
            self._grow(message, reader, on_first_text, team_id)
        except (SlackClientError, OSError) as exc:  # only when nothing was posted
            reader.wait()
            raise Undelivered(exc, _rendered(stream, reader, preface)) from exc
        if not message.ts:  # the stream ended before any text
            if reader.error is not None:
                raise reader.error
            return self._whole(channel, thread_ts, stream, preface, rest_in_thread)
        if reader.error is not None:
            sentence = user_facing(reader.error)
            messages = render_text(f"{message.text.rstrip()}\n\n{sentence}")
            message.text += f"\n\n{sentence}"
            exact = True
        else:
            answer = stream.answer
            messages = render_answer(answer, answer_id=answer.answer_id, preface=preface)
            # Only an uncited answer streamed as it ends needs no update (citations get links).
            exact = answer.text == message.text and not answer.citations
            exact = exact and not preface and len(messages) == 1
            message.footer = footer(answer, answer.answer_id)[1] if len(messages) == 1 else []
        message.finish(messages[0], exact=exact)
        rest = messages[1:]
        if rest:
            where = thread_ts or (message.ts if rest_in_thread else None)
            try:
                self._outbox.post(channel, rest, thread_ts=where)
            except (SlackClientError, OSError) as exc:
                log.error("could not post an answer's rest in %s: %s", channel, error_code(exc))
        else:  # posted with the rest otherwise
            self._outbox.upload(channel, thread_ts or message.ts, messages[0].files)
        return message.ts

    def _grow(
        self,
        message: _Growing,
        reader: _Reader,
        on_first_text: Callable[[], None] | None,
        team_id: str,
    ) -> None:
        """Show the text as it arrives, one call per interval at most, until the stream ends."""
        interval = self._append_interval if message.native else self._edit_interval
        next_at = 0.0
        ended = False
        while not ended:
            text, ended = reader.take(None)
            wait = next_at - time.monotonic()
            if wait > 0 and not ended:
                reader.wait(wait)  # more text may gather meanwhile: it goes with this call
                more, ended = reader.take(0)
                text += more
            if ended:  # what came with the end goes with the final call, not an edit of its own
                message.text += text
                break
            if not text:
                continue
            first = not message.ts
            message.add(text)
            if not message.native:
                interval = self._edit_interval
            next_at = time.monotonic() + interval
            if first:
                if message.refusal in WORKSPACE_REFUSALS:
                    with self._lock:
                        self._refused.add(team_id)
                if on_first_text is not None:
                    on_first_text()
        message.next_at = next_at

    def _whole(
        self,
        channel: str,
        thread_ts: str | None,
        stream: AnswerStream,
        preface: str,
        rest_in_thread: bool,
    ) -> str:
        answer = stream.answer
        messages = render_answer(answer, answer_id=answer.answer_id, preface=preface)
        try:
            return self._outbox.post(
                channel, messages, thread_ts=thread_ts, thread_rest=rest_in_thread
            )
        except (SlackClientError, OSError) as exc:
            raise Undelivered(exc, messages) from exc


def _rendered(stream: AnswerStream, reader: _Reader, preface: str) -> list[SlackMessage]:
    if reader.error is not None:
        return render_text(user_facing(reader.error))
    answer = stream.answer
    return render_answer(answer, answer_id=answer.answer_id, preface=preface)


class _Reader:
    """Reads the stream on a thread of its own: a slow or rate-limited Slack never holds
    the model back, and whatever arrived meanwhile goes out with the next call."""

    def __init__(self, stream: AnswerStream) -> None:
        self._stream = stream
        self._cond = threading.Condition()
        self._text = ""
        self._done = False
        self.error: Exception | None = None
        threading.Thread(target=self._read, name="slack-stream-read", daemon=True).start()

    def _read(self) -> None:
        try:
            for piece in self._stream:
                with self._cond:
                    self._text += piece
                    self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 -- shown to the user as one sentence
            self.error = exc
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def take(self, timeout: float | None) -> tuple[str, bool]:
        """The text that arrived (waiting up to `timeout` for some); and whether it all has."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._text) or self._done, timeout)
            text, self._text = self._text, ""
            return text, self._done

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the stream has ended (or `timeout`); True when it has."""
        with self._cond:
            return self._cond.wait_for(lambda: self._done, timeout)


class _Growing:
    """One answer message while it grows: a live Slack stream, or a message edited."""

    def __init__(
        self,
        client: WebClient,
        outbox: Outbox,
        channel: str,
        where: tuple[str | None, str],
        recipient: tuple[str, str],
        *,
        native: bool,
    ) -> None:
        self._client = client
        self._outbox = outbox
        self._channel = channel
        self._thread_ts, self._preface = where  # the thread (None: top level), the preface
        self._recipient = recipient
        self.native = native  # still streaming with chat.*Stream
        self.ts = ""
        self.text = ""  # the answer text so far (markdown)
        self._sent = 0  # how much of it a stream call delivered
        self.refusal = ""  # why Slack would not start a stream
        self.footer: Sequence[Block] = []
        self.next_at = 0.0  # the next edit not before this (monotonic)

    def add(self, text: str) -> None:
        self.text += text
        if self.native:
            self._stream()
        else:
            self._edit()

    def _stream(self) -> None:
        try:
            while self._sent < len(self.text):
                part = self.text[self._sent : self._sent + MAX_APPEND]
                if not self.ts:
                    resp = self._client.chat_startStream(
                        channel=self._channel,
                        thread_ts=str(self._thread_ts),
                        markdown_text=part,
                        recipient_team_id=self._recipient[0] or None,
                        recipient_user_id=self._recipient[1] or None,
                    )
                    self.ts = str(resp.get("ts") or "")
                else:
                    self._client.chat_appendStream(
                        channel=self._channel, ts=self.ts, markdown_text=part
                    )
                self._sent += len(part)
        except SlackApiError as exc:
            code = error_code(exc)
            if not self.ts and code in NOT_POSTABLE:
                raise  # posting would fail alike
            self._stream_failed(code)

    def _stream_failed(self, code: str) -> None:
        if self.ts and code == "ratelimited":
            return  # still streaming: the undelivered text goes with the next call
        if not self.ts:
            self.refusal = code
            log.info("Slack would not stream in %s (%s); editing a message", self._channel, code)
        else:
            log.warning("the stream in %s ended early (%s); editing it", self._channel, code)
            self._stop_quietly()
        self.native = False
        self._edit()

    def _edit(self) -> None:
        body = to_mrkdwn(self.text)
        body = f"{self._preface}\n\n{body}" if self._preface else body
        if not self.ts:  # the first post: failing here is failing to answer at all
            resp = self._client.chat_postMessage(
                channel=self._channel,
                text=body,
                thread_ts=self._thread_ts,
                unfurl_links=False,
                unfurl_media=False,
            )
            self.ts = str(resp.get("ts") or "")
            return
        try:
            self._client.chat_update(channel=self._channel, ts=self.ts, text=body)
        except (SlackClientError, OSError) as exc:  # the next edit carries this text too
            log.warning("chat.update in %s failed: %s", self._channel, error_code(exc))

    def _stop_quietly(self) -> None:
        with contextlib.suppress(SlackClientError, OSError):  # over already, most likely
            self._client.chat_stopStream(channel=self._channel, ts=self.ts)

    def finish(self, message: SlackMessage, *, exact: bool) -> None:
        """The final state: the stream stopped with its footer, then the whole message."""
        while self.native and len(self.text) - self._sent > MAX_APPEND:  # a backlog: in parts
            part = self.text[self._sent : self._sent + MAX_APPEND]
            try:
                self._client.chat_appendStream(
                    channel=self._channel, ts=self.ts, markdown_text=part
                )
                self._sent += len(part)
            except (SlackClientError, OSError) as exc:
                log.warning("chat.appendStream in %s failed: %s", self._channel, error_code(exc))
                self.native = False  # the final update carries it all
        if self.native:
            rest = self.text[self._sent :]
            try:
                self._client.chat_stopStream(
                    channel=self._channel,
                    ts=self.ts,
                    markdown_text=rest or None,
                    blocks=list(self.footer) or None,
                )
                self._sent = len(self.text)
            except (SlackClientError, OSError) as exc:
                log.warning("chat.stopStream in %s failed: %s", self._channel, error_code(exc))
                exact = False
            if exact:
                return
        else:
            time.sleep(max(0.0, self.next_at - time.monotonic()))  # edits stay one a second
        try:
            self._outbox.update(self._channel, self.ts, message)
        except (SlackClientError, OSError) as exc:
            log.error("the final update in %s failed: %s", self._channel, error_code(exc))
