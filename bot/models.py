"""Frozen values that flow between the parts of codecite.

Everything here is plain data: no I/O, no chat SDK, no index. Line numbers are
1-based and inclusive everywhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

ID_MAX = 512  # Pinecone's id limit; local ids follow the same rule


@dataclass(frozen=True, slots=True)
class Span:
    """One chunk of a file as a chunker sees it, before repo and commit are known."""

    start_line: int
    end_line: int
    kind: str  # function, method, class, section, window, module, ...
    symbol: str = ""  # qualified, e.g. "Class.method"; "" for anonymous spans
    header: str = ""  # short context: enclosing class and signature lines


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of one file at one commit, with the exact text it covers."""

    repo: str
    path: str
    language: str
    start_line: int
    end_line: int
    kind: str
    symbol: str
    header: str
    text: str
    commit: str
    # The id, computed once: ingest and every search ask for it many times per chunk.
    _id: str = field(default="", init=False, compare=False, repr=False)

    @property
    def digest(self) -> str:
        """Content-derived: the same text at the same place gets the same digest."""
        payload = f"{self.start_line}:{self.end_line}\n{self.symbol}\n{self.header}\n{self.text}"
        return hashlib.sha256(payload.encode("utf-8", "replace")).hexdigest()[:DIGEST_LEN]

    @property
    def id(self) -> str:
        if not self._id:
            object.__setattr__(self, "_id", chunk_id(self.repo, self.path, self.digest))
        return self._id

    @property
    def label(self) -> str:
        return line_label(self.path, self.start_line, self.end_line)

    def embed_text(self) -> str:
        """What an embedder sees: the enclosing signature, then the code.

        The path is left out on purpose: a renamed file or directory then needs
        no new embeddings (the cache is keyed by this text); lexical search
        covers paths.
        """
        return f"{self.header}\n{self.text}" if self.header else self.text


DIGEST_LEN = 16


def _id_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # never raises, even for odd file names


def _id_path(repo: str, path: str) -> str:
    """The path as it appears in ids: itself, or its hash when a full id would be too long.

    Decided without the digest, so a file's prefix and its chunks' ids always agree.
    """
    if len(_id_bytes(f"{repo}#{path}#")) + DIGEST_LEN <= ID_MAX:
        return path
    return "~" + hashlib.sha256(_id_bytes(path)).hexdigest()[:32]


def chunk_id(repo: str, path: str, digest: str) -> str:
    """`repo#path#digest`, with the path hashed when the id would be too long."""
    return f"{repo}#{_id_path(repo, path)}#{digest}"


def file_prefix(repo: str, path: str) -> str:
    """The id prefix shared by every chunk of one file."""
    return f"{repo}#{_id_path(repo, path)}#"


def line_label(path: str, start: int, end: int) -> str:
    return f"{path}:L{start}" if start == end else f"{path}:L{start}-L{end}"


@dataclass(frozen=True, slots=True)
class FileDoc:
    """One indexed file: what the index keeps for whole-file relevance and change detection."""

    path: str
    blob: str  # git blob sha (or content sha for plain directories)
    language: str
    text: str  # scrubbed text, used for file-level lexical relevance
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileEntry:
    """What the index remembers about an indexed file (no text)."""

    path: str
    blob: str
    language: str
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepoState:
    """The indexed state of one repository: recorded only after a whole update is in."""

    name: str
    source: str  # URL (credentials stripped) or absolute local path
    branch: str
    commit: str  # full sha, or "" for a plain directory
    indexed_at: datetime
    web_url: str = ""  # e.g. https://github.com/org/repo, "" for local-only repos
    files: int = 0
    chunks: int = 0

    def freshness(self, now: datetime | None = None) -> Freshness:
        return Freshness(self.name, self.branch, self.commit, self.indexed_at, now)


@dataclass(frozen=True, slots=True)
class Freshness:
    repo: str
    branch: str
    commit: str
    indexed_at: datetime
    now: datetime | None = None

    def describe(self) -> str:
        """`main@abc1234, indexed 12 min ago`."""
        at = self.commit[:7] if self.commit else "working tree"
        ref = f"{self.branch}@{at}" if self.branch else at
        return f"{self.repo} {ref}, indexed {ago(self.indexed_at, self.now)}"


def ago(then: datetime, now: datetime | None = None) -> str:
    """A short "12 min ago" for a past moment."""
    now = now or datetime.now(UTC)
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} d ago"


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved chunk and its score (higher is better; scales differ by stage).

    `relevance`, once judged (`bot.retrieval.relevance`), is absolute: the share of the
    question's weighted concepts the chunk contains, 0.0 to 1.0, comparable across
    questions; None before.
    """

    chunk: Chunk
    score: float
    relevance: float | None = None


@dataclass(frozen=True, slots=True)
class FileHit:
    repo: str
    path: str
    score: float


@dataclass(frozen=True, slots=True)
class Turn:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    """What an adapter hands the core. `scope` None means every indexed repository."""

    text: str
    scope: frozenset[str] | None = None
    conversation: tuple[Turn, ...] = ()
    user: str = ""
    channel: str = ""


@dataclass(frozen=True, slots=True)
class ChangeRef:
    """A commit as a citation shows it: what last changed the cited lines, or the cited
    commit itself. `sha` "" means older than the recorded history (`date` its start)."""

    sha: str
    date: str  # YYYY-MM-DD (author date)
    author: str = ""
    subject: str = ""
    pr: int | None = None
    url: str = ""  # the commit's page, "" for local repositories
    pr_url: str = ""

    @property
    def note(self) -> str:
        """`last changed 3b16957c (2025-03-02, #2873)`."""
        if not self.sha:
            return f"last changed before {self.date} (older than the recorded history)"
        pr = f", #{self.pr}" if self.pr else ""
        return f"last changed {self.sha[:8]} ({self.date}{pr})"


@dataclass(frozen=True, slots=True)
class Citation:
    repo: str
    path: str
    start_line: int
    end_line: int
    url: str  # permalink at the indexed commit (or the commit's page), "" for local ones
    symbol: str = ""
    kind: Literal["code", "commit"] = "code"
    sha: str = ""  # a commit citation's full sha
    changed: ChangeRef | None = None  # code: what last changed the lines; commit: itself

    @property
    def label(self) -> str:
        if self.kind == "commit":
            return self.sha[:8]
        return line_label(self.path, self.start_line, self.end_line)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.embedding_tokens + other.embedding_tokens,
        )


AnswerMode = Literal["llm", "extractive", "empty"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file that goes with an answer (an architecture diagram), uploaded beside its text."""

    filename: str  # "chi-architecture.png"
    data: bytes
    mime: str  # "image/png"
    title: str
    alt_text: str = ""  # the same content as text (the diagram's Mermaid source)


@dataclass(frozen=True, slots=True)
class Answer:
    """Markdown text whose citation labels (`path:L10-L42`) match `citations`."""

    text: str
    citations: tuple[Citation, ...]
    freshness: tuple[Freshness, ...]
    usage: Usage = Usage()
    timings: dict[str, float] = field(default_factory=dict)
    mode: AnswerMode = "llm"
    answer_id: str = ""  # its record for 👍/👎 feedback; "" when it could not be stored
    attachments: tuple[Attachment, ...] = ()  # files shown with the text (a diagram)
