"""Whether this process can answer now: its index and its stores reachable (`/readyz`).

Each check is the cheapest call that touches the real thing: the index's
repository states (a read of the local file, or of the state Pinecone's index
keeps beside it) and the stores' `ping`. The reason is one sentence for a
probe: no path, no secret, no traceback; the detail goes to the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.errors import BotError
from bot.index.base import Index
from bot.store.base import StoreSet

log = logging.getLogger(__name__)


def readiness(index: Index, stores: StoreSet) -> str:
    """ "" when the index and the stores answer, else why not (the first failing check)."""
    checks: tuple[tuple[str, Callable[[], object]], ...] = (
        ("index", index.repo_states),
        ("stores", stores.ping),
    )
    for what, check in checks:
        try:
            check()
        except BotError as exc:
            log.warning("not ready: %s: %s", what, exc.detail or exc.user_message)
            return f"{what}: {exc.user_message}"
        except Exception as exc:  # a probe gets a sentence, the log the rest
            log.warning("not ready: %s: %s", what, type(exc).__name__, exc_info=True)
            return f"{what}: unreachable"
    return ""
