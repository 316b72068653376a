"""Commands that ask first (`forget`): the question with its button, and the click.

The question is the command's text with a red button (`render_confirm`), behind
Slack's own "are you sure?" dialog. A click runs the line the button carries
("forget shop yes") with the clicker's own rights and scope, exactly as if they had
typed it: someone who may not sees a refusal only they can read, and the question
stays for whoever may. Otherwise the clicked message becomes "Forgetting shop…"
(so it cannot be clicked twice), then the report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from adapters.common.errors import result_text, user_facing
from adapters.slack.conversations import ConversationTypes
from adapters.slack.events import ButtonClick
from adapters.slack.outbox import Outbox
from adapters.slack.render import SlackMessage, render_confirm, render_text
from bot.commands import FORGET, CommandResult, Syntax, forget_target, parse
from bot.core import Core

log = logging.getLogger(__name__)

FORGETTING = ":wastebasket: Forgetting {}; the result follows here."
STALE_BUTTON = "That button no longer does anything here."


def rendered(result: CommandResult) -> list[SlackMessage]:
    """A command's text, with its confirmation button when it asks first."""
    if result.confirm:
        return render_confirm(result.text, result.confirm)
    return render_text(result.text)


class ConfirmButtons:
    def __init__(
        self,
        core: Core,
        outbox: Outbox,
        conversations: ConversationTypes,
        track: Callable[[Future[Any]], None],
        syntax: Syntax,
    ) -> None:
        self._core = core
        self._outbox = outbox
        self._conversations = conversations
        self._track = track  # work the adapter finishes before it closes
        self._syntax = syntax

    def on_click(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A click, acknowledged (`SlackHandlers.acked`)."""
        click = ButtonClick.from_payload(body, action)
        command = parse(click.value)
        repo, confirmed = forget_target(command.argument)
        if command.spec is not FORGET or not confirmed:
            self._outbox.respond(click.response_url, render_text(STALE_BUTTON), in_channel=False)
            return
        conversation = self._conversations.lookup(click.channel)
        ctx = click.context(conversation, is_admin=self._core.is_listed_admin(click.user))
        try:
            result = self._core.run_command(command, ctx, self._syntax)
        except Exception as exc:  # noqa: BLE001 -- a refusal reaches only the clicker
            refusal = render_text(user_facing(exc))
            self._outbox.respond(click.response_url, refusal, in_channel=False)
            return
        self._replace(click, render_text(FORGETTING.format(repo)))
        if result.later is not None:
            self._track(result.later)
            result.later.add_done_callback(partial(self._replace_later, click))

    def _replace_later(self, click: ButtonClick, later: Future[str]) -> None:
        self._replace(click, render_text(result_text(later)))

    def _replace(self, click: ButtonClick, messages: list[SlackMessage]) -> None:
        """The clicked message becomes `messages`, seen by whoever saw it."""
        visible = not click.ephemeral
        self._outbox.respond(click.response_url, messages, in_channel=visible, replace=True)
