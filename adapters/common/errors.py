"""What a user sees when something fails: one sentence and an incident id.

The details (exception, traceback) go to the log under the same id, so a
report from a user can be matched to the log line. Never raw exception text.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from concurrent.futures import Future

from bot.errors import BotError
from bot.runtime import metrics

log = logging.getLogger(__name__)

GENERIC = "Something went wrong on my side."


def incident_id() -> str:
    return uuid.uuid4().hex[:8]


def user_facing(exc: BaseException, *, extra: Mapping[str, object] | None = None) -> str:
    """Log `exc` with a fresh incident id and return the sentence to show the user.

    `extra` marks the log record (the terminal passes `PRINTED`: it shows the sentence
    itself, so its log handler leaves the record to the log file)."""
    ref = incident_id()
    metrics.error(type(exc).__name__ if isinstance(exc, BotError) else "unexpected")
    if isinstance(exc, BotError):
        # Expected failures: no traceback needed, the detail is enough (with the operator's
        # sentence when the user's is a plainer one: which setting, which host).
        reason = exc.detail or exc.user_message
        if exc.operator_message != exc.user_message:
            reason = f"{exc.operator_message}: {reason}"
        if not exc.incident:  # a restart, say: the sentence is all there is
            log.info("%s: %s", type(exc).__name__, reason, extra=extra)
            return exc.user_message
        log.warning("incident %s: %s: %s", ref, type(exc).__name__, reason, extra=extra)
        return f"{exc.user_message} (incident {ref})"
    log.error("incident %s: unexpected error", ref, exc_info=exc, extra=extra)
    return f"{GENERIC} Please try again. (incident {ref})"


def result_text(later: Future[str]) -> str:
    """A finished future's text, or the sentence for how it failed (logged, as above)."""
    try:
        return later.result()
    except Exception as exc:  # noqa: BLE001 -- every failure becomes a sentence for the user
        return user_facing(exc)
