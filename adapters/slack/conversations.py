"""What kind of Slack conversation a question comes from, asked of `conversations.info`.

`app_mention` events carry no `channel_type`, and a channel id's prefix cannot
tell a private channel from a group DM (both may be `G…`; sharing a channel
with another organisation can change its prefix), so codecite asks Slack once
per conversation and keeps the answer for a few minutes in a bounded cache.
A thread is in its conversation, so it has the same kind.

When Slack cannot answer (an outage, a missing scope, a conversation the bot
cannot see) the kind is unknown and the core fails closed: only an explicit
mapping of the conversation gives a scope. Failures are not cached, so the
next question asks again.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.context import Audience

log = logging.getLogger(__name__)

Kind = Literal["public", "private", "im", "mpim"]
CACHE_SIZE = 2048
CACHE_SECONDS = 300.0  # a channel may become shared; events also say so at once


@dataclass(frozen=True, slots=True)
class Conversation:
    """kind None: Slack could not tell. external: shared with another organisation."""

    kind: Kind | None
    external: bool = False

    @property
    def is_dm(self) -> bool:
        """A one-to-one or group DM; an unknown conversation is treated as one too."""
        return self.kind in ("im", "mpim", None)

    @property
    def audience(self) -> Audience:
        if self.kind is None:
            return "unknown"
        return "external" if self.external else "internal"

    def shared(self) -> Conversation:
        return replace(self, external=True)


UNKNOWN = Conversation(None)
_CODE = re.compile(r"^[a-z0-9_.:]{1,64}$")  # Slack's error codes and scope names


def _reason(exc: SlackApiError) -> str:
    """Slack's error code; never the body of a response that was not Slack's JSON."""
    code = str(exc.response.get("error") or "")
    return code if _CODE.match(code) else f"HTTP {exc.response.status_code}"


def classify(channel: Mapping[str, Any]) -> Conversation:
    """A conversation object (as `conversations.info` returns it) -> its kind.

    ims carry `is_im` and no `is_private`; mpims `is_mpim` (and, in older
    payloads, `is_group`), so those are checked first.
    """
    external = bool(channel.get("is_ext_shared") or channel.get("is_pending_ext_shared"))
    if channel.get("is_im"):
        return Conversation("im", external)
    if channel.get("is_mpim"):
        return Conversation("mpim", external)
    if channel.get("is_private") or channel.get("is_group"):
        return Conversation("private", external)
    if channel.get("is_channel"):
        return Conversation("public", external)
    return UNKNOWN  # a shape we do not know: fail closed


class ConversationTypes:
    """`conversations.info` per channel, remembered for `ttl` seconds, at most `size` channels."""

    def __init__(
        self,
        client: WebClient,
        *,
        size: int = CACHE_SIZE,
        ttl: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if size < 1:
            raise ValueError("the cache needs room for at least one conversation")
        self._client = client
        self._size = size
        self._ttl = ttl
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, Conversation]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    def lookup(self, channel: str) -> Conversation:
        cached = self._cached(channel)
        if cached is not None:
            return cached
        conversation = self._ask(channel)
        if conversation is not UNKNOWN:
            self._remember(channel, conversation)
        return conversation

    def forget(self, channel: str) -> None:
        """Drop what is known of `channel` (it was just shared or unshared)."""
        with self._lock:
            self._cache.pop(channel, None)

    def _cached(self, channel: str) -> Conversation | None:
        with self._lock:
            entry = self._cache.get(channel)
            if entry is None:
                return None
            at, conversation = entry
            if self._clock() - at >= self._ttl:
                del self._cache[channel]
                return None
            self._cache.move_to_end(channel)
            return conversation

    def _remember(self, channel: str, conversation: Conversation) -> None:
        with self._lock:
            self._cache[channel] = (self._clock(), conversation)
            self._cache.move_to_end(channel)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)

    def _ask(self, channel: str) -> Conversation:
        if not channel:
            return UNKNOWN
        try:
            response = self._client.conversations_info(channel=channel)
        except SlackApiError as exc:
            needed = str(exc.response.get("needed") or "")
            hint = f" (reinstall the app to grant {needed})" if _CODE.match(needed) else ""
            log.warning("conversations.info %s failed: %s%s", channel, _reason(exc), hint)
            return UNKNOWN
        except (SlackClientError, OSError) as exc:
            log.warning("conversations.info %s failed: %s", channel, type(exc).__name__)
            return UNKNOWN
        data = response.get("channel")
        return classify(data) if isinstance(data, Mapping) else UNKNOWN
