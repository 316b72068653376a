"""The values the stores keep, shared by every implementation of the contract (`base`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from bot.errors import BotError

RUNNING, DONE, INTERRUPTED = "running", "done", "interrupted"
# The skip reasons (`bot.ingest.filters`) that keep a file out for the secrets it holds.
SECRET_SKIPS = ("secret_file", "secret_in_path")


class IngestOutcome(Protocol):
    """What a run records of an ingest (`bot.ingest.pipeline.IngestReport` has it)."""

    @property
    def repo(self) -> str: ...
    @property
    def seconds(self) -> float: ...
    @property
    def commit(self) -> str: ...
    @property
    def files_added(self) -> int: ...
    @property
    def files_changed(self) -> int: ...
    @property
    def files_removed(self) -> int: ...
    @property
    def chunks_added(self) -> int: ...
    @property
    def chunks_removed(self) -> int: ...
    @property
    def embedded_inputs(self) -> int: ...
    @property
    def embedding_tokens(self) -> int: ...
    @property
    def embedding_tokens_saved(self) -> int: ...
    @property
    def skipped(self) -> Mapping[str, int]: ...  # reason -> files not indexed
    @property
    def secrets_redacted(self) -> Mapping[str, int]: ...  # kind -> secrets redacted


@dataclass(frozen=True, slots=True)
class Run:
    """One ingest of one repository, as the run log keeps it."""

    repo: str
    started_at: datetime
    seconds: float
    trigger: str  # schedule, webhook, command, cli
    commit: str = ""
    files_added: int = 0
    files_changed: int = 0
    files_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded_inputs: int = 0
    embedding_tokens: int = 0
    error: str = ""  # the user-facing sentence, "" when the run succeeded
    embedding_tokens_saved: int = 0
    state: str = DONE  # RUNNING until it ends; INTERRUPTED when its process died
    # What the run left out of the index for holding secrets (`status` reports it): files
    # skipped whole (a private key, a credentials file, a token in the path), private key
    # blocks cut from files indexed without them, and other secrets redacted in place.
    secret_files: int = 0
    key_blocks: int = 0
    redactions: int = 0

    @property
    def ok(self) -> bool:
        return self.state == DONE and not self.error

    @classmethod
    def from_report(cls, report: IngestOutcome, started: datetime, trigger: str) -> Run:
        return cls(
            repo=report.repo,
            started_at=started,
            seconds=report.seconds,
            trigger=trigger,
            commit=report.commit,
            files_added=report.files_added,
            files_changed=report.files_changed,
            files_removed=report.files_removed,
            chunks_added=report.chunks_added,
            chunks_removed=report.chunks_removed,
            embedded_inputs=report.embedded_inputs,
            embedding_tokens=report.embedding_tokens,
            embedding_tokens_saved=report.embedding_tokens_saved,
            secret_files=sum(report.skipped.get(r, 0) for r in SECRET_SKIPS),
            key_blocks=report.secrets_redacted.get("private_key", 0),
            redactions=sum(
                n for kind, n in report.secrets_redacted.items() if kind != "private_key"
            ),
        )

    @classmethod
    def failed(
        cls, repo: str, started: datetime, seconds: float, trigger: str, exc: BotError
    ) -> Run:
        return cls(repo, started, seconds, trigger, error=exc.user_message)


def run_columns(run: Run, started: object) -> tuple[object, ...]:
    """A run as the run log's columns, in table order; `started` is `started_at` as the
    backend stores it (ISO text in SQLite, a timestamp in PostgreSQL)."""
    return (
        run.repo,
        started,
        run.seconds,
        run.trigger,
        run.commit,
        run.files_added,
        run.files_changed,
        run.files_removed,
        run.chunks_added,
        run.chunks_removed,
        run.embedded_inputs,
        run.embedding_tokens,
        run.error,
        run.embedding_tokens_saved,
        run.state,
        run.secret_files,
        run.key_blocks,
        run.redactions,
    )


def run_from_columns(row: Sequence[object], started: datetime) -> Run:
    """The inverse of `run_columns`, with `started` already decoded by the backend."""
    counts = [int(str(v)) for v in row[5:12]]
    return Run(
        repo=str(row[0]),
        started_at=started,
        seconds=float(str(row[2])),
        trigger=str(row[3]),
        commit=str(row[4]),
        files_added=counts[0],
        files_changed=counts[1],
        files_removed=counts[2],
        chunks_added=counts[3],
        chunks_removed=counts[4],
        embedded_inputs=counts[5],
        embedding_tokens=counts[6],
        error=str(row[12]),
        embedding_tokens_saved=int(str(row[13])),
        state=str(row[14]),
        secret_files=int(str(row[15])),
        key_blocks=int(str(row[16])),
        redactions=int(str(row[17])),
    )


@dataclass(frozen=True, slots=True)
class FeedbackRow:
    """One vote on an answer on record, with what was asked and answered."""

    answer_id: str
    platform: str
    channel: str
    question: str
    answer: str
    citations: tuple[str, ...]  # labels, e.g. "src/app.py:L3-L9"
    voter: str
    vote: int  # +1 or -1
    at: datetime


# -- Pinecone's repository state ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A chunk record Pinecone holds: its token dimensions and whether it has an embedding."""

    id: str
    repo: str
    path: str
    dense: bool
    terms: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FileRow:
    repo: str
    path: str
    blob: str
    language: str
    chunk_ids: tuple[str, ...]
    terms: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Counts:
    repos: int
    files: int
    chunks: int
    vectors: int


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """How many documents there are and, per token dimension, how many contain it."""

    documents: int
    df: Mapping[int, int] = field(default_factory=dict)
