"""What a process's operator sees of its Core and does to it: readiness, the metrics'
gauges, and the stop within a deadline (`bot.runtime.drain`)."""

from __future__ import annotations

from bot.config import Settings
from bot.errors import BotError
from bot.index.base import Index
from bot.readiness import Readiness, checks_for
from bot.runtime.drain import Drain
from bot.runtime.once import Once
from bot.runtime.queue import AnswerQueue
from bot.store.base import StoreSet

STOPPING = "shutting down"


class Lifecycle:
    def __init__(
        self,
        settings: Settings,
        index: Index,
        stores: StoreSet,
        queue: AnswerQueue,
        drain: Drain,
        models: tuple[object | None, object | None],
    ) -> None:
        """`models`: the chat model and the embedder (either may be None)."""
        self._settings = settings
        self._index = index
        self._stores = stores
        self._queue = queue
        self._drain = drain
        self._models = models
        self._ready = Once(self._new_readiness)

    def readiness(self) -> str:
        """Why this process cannot answer now ("" when it can): see `bot.readiness`."""
        if self._drain.draining:
            return STOPPING
        return self._ready.get()()

    def _new_readiness(self) -> Readiness:
        llm, embedder = self._models
        model = llm if llm is not None else embedder
        checks = checks_for(self._index, self._index.repo_states, self._stores.ping, model)
        return Readiness(checks, ttl=self._settings.ready_cache_seconds)

    def gauges(self) -> dict[str, float | None]:
        """What the metrics read at each scrape: this process's answer line, and the re-ingest
        jobs waiting for a runner (None when the job table cannot be read now)."""
        try:
            queued: float | None = self._stores.jobs.queued()
        except BotError:
            queued = None
        return {
            "answer_queue_running": self._queue.running,
            "answer_queue_waiting": self._queue.waiting,
            "ingest_jobs_queued": queued,
        }

    def drain(self, grace: float | None) -> bool:
        return self._drain.run(self._settings.shutdown_grace if grace is None else grace)

    def interrupt_models(self) -> None:
        """End every model request in flight (their clients are closed; nothing new asks)."""
        for client in self._models:
            close = getattr(client, "close", None)
            if close is not None:
                close()
