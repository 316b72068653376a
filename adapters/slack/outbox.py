"""Everything the bot sends to Slack: messages, ephemerals, reactions, response_url replies.

A message whose blocks Slack refuses is sent again as plain mrkdwn text (every
SlackMessage carries a complete text rendering), so an answer is never lost
to a rendering bug. Reactions are best effort: a missing 👀 must not stop an
answer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.webhook import WebhookClient

from adapters.slack.render import SlackMessage
from bot.models import Attachment

log = logging.getLogger(__name__)

# Slack's answers when it does not like the blocks: retry without them.
BLOCK_ERRORS = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long"})
# The bot cannot post here (not a member, a DM of other people, archived...).
NOT_POSTABLE = frozenset(
    {"not_in_channel", "channel_not_found", "is_archived", "restricted_action", "cannot_dm_bot"}
)
RESPONSE_URL_USES = 5  # Slack accepts five replies per response_url


def error_code(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or "unknown_error")
    return type(exc).__name__


class Outbox:
    def __init__(self, client: WebClient) -> None:
        self._client = client

    def post(
        self,
        channel: str,
        messages: Sequence[SlackMessage],
        *,
        thread_ts: str | None,
        thread_rest: bool = False,
    ) -> str:
        """Post in order and return the first message's ts.

        With no `thread_ts` and `thread_rest`, the messages after the first go into the
        first one's thread (a slash-command answer starts a thread of its own).
        """
        first = ""
        for message in messages:
            ts = self._post_one(channel, message, thread_ts)
            first = first or ts
            if thread_ts is None and thread_rest:
                thread_ts = first
            self.upload(channel, thread_ts or ts, message.files)
        return first

    def upload(self, channel: str, thread_ts: str, files: Sequence[Attachment]) -> None:
        """Upload an answer's files (a diagram) into its thread; the text is already there,
        so a refusal (no `files:write` scope, a file Slack will not take) is logged only."""
        if not files:
            return
        uploads = [
            {"content": f.data, "filename": f.filename, "title": f.title, "alt_txt": f.alt_text}
            for f in files
        ]
        try:
            self._client.files_upload_v2(
                channel=channel, thread_ts=thread_ts or None, file_uploads=uploads
            )
        except (SlackClientError, OSError) as exc:
            log.warning(
                "could not upload %d file(s) in %s: %s", len(files), channel, error_code(exc)
            )

    def _post_one(self, channel: str, message: SlackMessage, thread_ts: str | None) -> str:
        args: dict[str, Any] = {
            "channel": channel,
            "text": message.text,
            "thread_ts": thread_ts,
            "unfurl_links": False,  # permalinks would unfurl into large code previews
            "unfurl_media": False,
        }
        try:
            resp = self._client.chat_postMessage(**args, blocks=list(message.blocks) or None)
        except SlackApiError as exc:
            if not message.blocks or error_code(exc) not in BLOCK_ERRORS:
                raise
            log.warning("Slack refused the blocks (%s); posting plain text", error_code(exc))
            resp = self._client.chat_postMessage(**args)
        return str(resp.get("ts") or "")

    def update(self, channel: str, ts: str, message: SlackMessage) -> None:
        """Replace a message the bot posted (blocks refused: as plain text)."""
        try:
            self._client.chat_update(
                channel=channel, ts=ts, text=message.text, blocks=list(message.blocks) or None
            )
        except SlackApiError as exc:
            if not message.blocks or error_code(exc) not in BLOCK_ERRORS:
                raise
            log.warning("Slack refused the blocks (%s); updating as plain text", error_code(exc))
            self._client.chat_update(channel=channel, ts=ts, text=message.text, blocks=[])

    def ephemeral(
        self, channel: str, user: str, messages: Sequence[SlackMessage], *, thread_ts: str | None
    ) -> None:
        for message in messages:
            args: dict[str, Any] = {"channel": channel, "user": user, "text": message.text}
            try:
                self._client.chat_postEphemeral(
                    **args, thread_ts=thread_ts, blocks=list(message.blocks) or None
                )
            except SlackApiError as exc:
                if not message.blocks or error_code(exc) not in BLOCK_ERRORS:
                    raise
                self._client.chat_postEphemeral(**args, thread_ts=thread_ts)

    def respond(
        self,
        response_url: str,
        messages: Sequence[SlackMessage],
        *,
        in_channel: bool,
        replace: bool = False,
    ) -> bool:
        """Reply through a response_url (slash commands, buttons); False when Slack refused.
        `replace`: the message whose button was clicked becomes the (first) reply."""
        if not response_url:
            log.warning("no response_url to reply to")
            return False
        hook = WebhookClient(response_url)
        kind = "in_channel" if in_channel else "ephemeral"
        for index, message in enumerate(messages[:RESPONSE_URL_USES]):
            body: dict[str, Any] = {
                "response_type": kind,
                "replace_original": replace and index == 0,
                "text": message.text,
            }
            if message.blocks and self._send(hook, {**body, "blocks": list(message.blocks)}):
                continue
            if not self._send(hook, body):  # no blocks, or blocks refused: plain text
                return False
        return True

    def _send(self, hook: WebhookClient, body: dict[str, Any]) -> bool:
        try:
            resp = hook.send_dict(body)
        except (SlackClientError, OSError) as exc:
            log.warning("response_url reply failed: %s", error_code(exc))
            return False
        if resp.status_code != 200:
            log.warning("response_url reply refused: %s %s", resp.status_code, resp.body[:100])
            return False
        return True

    def react(self, channel: str, ts: str, name: str) -> None:
        try:
            self._client.reactions_add(channel=channel, timestamp=ts, name=name)
        except (SlackClientError, OSError) as exc:
            if error_code(exc) != "already_reacted":
                log.warning("reactions.add %s failed: %s", name, error_code(exc))

    def unreact(self, channel: str, ts: str, name: str) -> None:
        try:
            self._client.reactions_remove(channel=channel, timestamp=ts, name=name)
        except (SlackClientError, OSError) as exc:
            if error_code(exc) != "no_reaction":
                log.warning("reactions.remove %s failed: %s", name, error_code(exc))
