"""Ingests in a child process, so the answering interpreter keeps its core.

    children = ChildIngests(settings, build=wiring.ingest_parts)
    result = children.ingest(location, options, progress, quick)   # in a child, waited for
    children.cancel()                    # shutdown: stop them (the index stays as it was)

`IngestLine.in_children` (`Core.ingest_in_children`, what `serve` and `schedule` call) sends every
ingest of the line this way.

The parent keeps everything that is about the run: the repository's lock, the run
log, the job table, what a waiting ingest is told. The child does the ingest itself
(fetch, chunk, embed, write) through stores it opens from the same settings: SQLite
in WAL mode takes a second process, PostgreSQL and Pinecone are multi-process anyway.
A search in the parent sees the new rows at its next query, because the local index's
caches are keyed on generation counters the writer bumps in its own transaction.
Progress (`Progress`) is sent back as it happens. A child that is killed or runs out
of memory commits nothing (the index's transactions decide) and the run fails with
one sentence (`ChildDied`); the next run starts again from the indexed commit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.config import Settings
from bot.index.base import Index
from bot.ingest.pipeline import IngestOptions, Ingestor, IngestReport, Progress
from bot.llm.embeddings import Embedder
from bot.runtime.child import Cancelled, ChildDied, Children
from bot.store.base import HistoryRecords, SymbolTable

__all__ = ["Cancelled", "ChildDied", "ChildIngests", "IngestParts"]


# What an ingest writes through, opened in the child, and what releases it all.
IngestParts = tuple[
    Index, Embedder | None, SymbolTable | None, HistoryRecords | None, Callable[[], None]
]
# Opens the parts from settings (`bot.wiring.ingest_parts`): a module-level function, so
# that the child can import it.
Build = Callable[[Settings], IngestParts]


class ChildIngests:
    """Runs `Ingestor.ingest` in a child process per call; `cancel` stops them all."""

    def __init__(self, settings: Settings, *, build: Build, children: Children | None = None):
        self._settings = settings
        self._build = build
        self._children = children or Children()

    def ingest(
        self, location: str, options: IngestOptions, progress: Progress | None, quick: bool
    ) -> IngestReport:
        on_report = None if progress is None else (lambda step: progress(*step))
        args = (self._build, self._settings, location, options, quick)
        report: IngestReport = self._children.run(_ingest, args, on_report=on_report)
        return report

    def pids(self) -> list[int]:
        """The ingest processes running now."""
        return self._children.pids()

    def cancel(self) -> None:
        self._children.cancel()


def _ingest(
    report: Callable[[Any], None],
    build: Build,
    settings: Settings,
    location: str,
    options: IngestOptions,
    quick: bool,
) -> IngestReport:
    """In the child: open the stores, ingest, close them."""
    index, embedder, symbols, history, close = build(settings)
    try:
        ingestor = Ingestor(
            index, home=settings.home, embedder=embedder, symbols=symbols, history=history
        )
        return ingestor.ingest(location, options, lambda *step: report(step), quick=quick)
    finally:
        close()
