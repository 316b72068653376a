"""The retrieval systems the harness scores, behind one small interface.

A system indexes a directory (the tree at one commit) under a repository
name, then ranks files and functions for a question. It gets nothing else:
no gold labels, no reference answer, no history.

  codecite   the bot itself, in process (`Core.index_repo` + `Core.search`),
             indexing consecutive commits of a repository incrementally
  bm25files  plain BM25 over whole non-test .py files (the reference row)
  llamaindex the LlamaIndex recipe (bench/peer.py; needs .venv-bench)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

SYSTEMS = ("codecite", "bm25files", "llamaindex")
# Settings that would switch on dense search or a remote index: by default the eval measures
# the embedded default (local index, lexical only), whatever the environment says.
_MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PINECONE_API_KEY")


@dataclass(frozen=True, slots=True)
class RankedChunk:
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    score: float


@dataclass(frozen=True, slots=True)
class Ranking:
    files: list[str]  # distinct, best first
    chunks: list[RankedChunk] | None = None  # best first; None: the system ranks whole files
    seconds: float = 0.0


class System(Protocol):
    name: str

    def prepare(self, repo: str, tree: Path) -> dict[str, float]:
        """Index `tree` as the current state of `repo`; return ingest statistics."""

    def rank(self, repo: str, question: str) -> Ranking: ...

    def close(self) -> None: ...


def index_name(repo: str) -> str:
    return repo.replace("/", "__")


class CodeciteSystem:
    name = "codecite"

    def __init__(self, home: Path, top_k: int = 200, use_env_models: bool = False) -> None:
        from bot.config import FileConfig, LimitsConfig, Settings
        from bot.core import Core

        overrides: dict[str, object] = {"CODECITE_HOME": str(home)}
        if not use_env_models:
            overrides.update({k: None for k in _MODEL_ENV} | {"CODECITE_INDEX": "local"})
        # SWE-bench issues run to 25k characters; the bot's chat limit is a deployment knob.
        config = FileConfig(limits=LimitsConfig(max_question_chars=1_000_000))
        # Environment names as keys (pydantic-settings aliases), which mypy cannot see.
        self.core = Core.from_settings(Settings(**overrides), config)  # type: ignore[arg-type]
        self.top_k = top_k

    def prepare(self, repo: str, tree: Path) -> dict[str, float]:
        r = self.core.index_repo(str(tree), name=index_name(repo))
        return {
            "files": r.files,
            "chunks": r.chunks,
            "files_added": r.files_added,
            "files_changed": r.files_changed,
            "files_removed": r.files_removed,
            "chunks_added": r.chunks_added,
            "seconds": r.seconds,
        }

    def rank(self, repo: str, question: str) -> Ranking:
        from bot.core import CLI

        started = time.perf_counter()
        hits = self.core.search(
            question, CLI, repos=frozenset({index_name(repo)}), top_k=self.top_k
        )
        seconds = time.perf_counter() - started
        chunks = [
            RankedChunk(
                h.chunk.path,
                h.chunk.start_line,
                h.chunk.end_line,
                h.chunk.symbol,
                h.chunk.kind,
                h.score,
            )
            for h in hits
        ]
        return Ranking(
            files=list(dict.fromkeys(c.path for c in chunks)),
            chunks=chunks,
            seconds=seconds,
        )

    def close(self) -> None:
        self.core.close()


class Bm25FilesSystem:
    name = "bm25files"

    def __init__(self, tokenizer: str = "word") -> None:
        from bench.bm25files import Bm25Files

        self._cls = Bm25Files
        self._tokenizer = tokenizer
        self._index: dict[str, Bm25Files] = {}

    def prepare(self, repo: str, tree: Path) -> dict[str, float]:
        started = time.perf_counter()
        index = self._cls.from_tree(tree, self._tokenizer)
        self._index[repo] = index
        return {"files": len(index.paths), "seconds": time.perf_counter() - started}

    def rank(self, repo: str, question: str) -> Ranking:
        started = time.perf_counter()
        ranked = self._index[repo].rank(question, k=100)
        return Ranking(files=[p for p, _ in ranked], seconds=time.perf_counter() - started)

    def close(self) -> None:
        self._index.clear()


class LlamaIndexSystem:
    name = "llamaindex"

    def __init__(self, top_k: int = 200) -> None:
        from bench.peer import PeerIndex, offline_env

        offline_env()  # fails early, with advice, outside the bench venv
        self._cls = PeerIndex
        self._top_k = top_k
        self._index: dict[str, PeerIndex] = {}

    def prepare(self, repo: str, tree: Path) -> dict[str, float]:
        started = time.perf_counter()
        index, stats = self._cls.build(tree, self._top_k)
        self._index[repo] = index
        return {
            "files": stats.documents,
            "chunks": stats.nodes,
            "code_fallbacks": stats.code_fallbacks,
            "seconds": time.perf_counter() - started,
        }

    def rank(self, repo: str, question: str) -> Ranking:
        started = time.perf_counter()
        found = self._index[repo].chunks(question)
        seconds = time.perf_counter() - started
        chunks = [RankedChunk(path, start, end, "", "", score) for path, score, start, end in found]
        return Ranking(
            files=list(dict.fromkeys(c.path for c in chunks)), chunks=chunks, seconds=seconds
        )

    def close(self) -> None:
        self._index.clear()


def make_system(
    name: str, home: Path, *, top_k: int, use_env_models: bool, tokenizer: str = "word"
) -> System:
    if name == "codecite":
        return CodeciteSystem(home, top_k=top_k, use_env_models=use_env_models)
    if name == "bm25files":
        return Bm25FilesSystem(tokenizer)
    if name == "llamaindex":
        return LlamaIndexSystem(top_k=top_k)
    raise ValueError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
