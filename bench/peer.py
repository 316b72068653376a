"""The peer: the typical LlamaIndex recipe for "search our code", run exactly as its docs show.

    SimpleDirectoryReader(recursive) -> CodeSplitter (code, per language) or
    SentenceSplitter (prose) -> BM25Retriever over the nodes -> files ranked by
    their best chunk.

Runs only in the bench venv (`.venv-bench`, which has llama-index-core,
llama-index-retrievers-bm25 and tree-sitter-language-pack 0.13.0, whose
grammars are bundled). NLTK stopwords/punkt and the tiktoken encodings come
from the copies llama-index-core ships (`_static/`), pinned here through
NLTK_DATA and TIKTOKEN_CACHE_DIR so nothing is fetched at run time.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CODE_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
}
PROSE = (".md", ".rst", ".txt")
EXTENSIONS = (*CODE_LANGUAGES, *PROSE)

log = logging.getLogger(__name__)


class PeerMissing(RuntimeError):
    """llama-index is not importable: run with the bench venv."""


def offline_env() -> None:
    """Point NLTK and tiktoken at the data llama-index-core bundles (no downloads)."""
    try:
        import llama_index.core as core
    except ImportError as exc:
        raise PeerMissing(
            "llama-index is not installed here; run with .venv-bench/bin/python "
            "(see bench/README.md)"
        ) from exc
    static = Path(core.__file__).parent / "_static"
    os.environ.setdefault("NLTK_DATA", str(static / "nltk_cache"))
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(static / "tiktoken_cache"))


@dataclass(frozen=True, slots=True)
class SplitStats:
    documents: int
    nodes: int
    code_fallbacks: int  # code files CodeSplitter could not parse, split as prose instead


def load_documents(root: Path) -> list[Any]:
    offline_env()
    from llama_index.core import SimpleDirectoryReader

    reader = SimpleDirectoryReader(
        input_dir=str(root),
        recursive=True,
        required_exts=list(EXTENSIONS),
        raise_on_error=False,
    )
    return list(reader.load_data(show_progress=False))


def split_documents(documents: Sequence[Any]) -> tuple[list[Any], SplitStats]:
    """CodeSplitter per language for code, SentenceSplitter for prose and unparsable code."""
    from llama_index.core.node_parser import CodeSplitter, SentenceSplitter

    prose = SentenceSplitter()
    code: dict[str, Any] = {}
    nodes: list[Any] = []
    fallbacks = 0
    for doc in documents:
        language = CODE_LANGUAGES.get(Path(doc.metadata.get("file_path", "")).suffix.lower())
        if language is not None:
            splitter = code.get(language) or code.setdefault(language, CodeSplitter(language))
            try:
                nodes.extend(splitter.get_nodes_from_documents([doc]))
                continue
            except (ValueError, UnicodeDecodeError):
                fallbacks += 1  # the recipe's usual guard: fall back to prose splitting
        nodes.extend(prose.get_nodes_from_documents([doc]))
    return nodes, SplitStats(len(documents), len(nodes), fallbacks)


class PeerIndex:
    """BM25Retriever over the recipe's nodes; files ranked by their best chunk."""

    def __init__(self, root: Path, nodes: Sequence[Any], top_k: int = 200) -> None:
        offline_env()
        from llama_index.retrievers.bm25 import BM25Retriever

        self.root = root.resolve()
        self.nodes = len(nodes)
        self._texts: dict[str, str] = {}
        self._retriever = BM25Retriever.from_defaults(
            nodes=list(nodes), similarity_top_k=min(top_k, max(1, len(nodes)))
        )

    @classmethod
    def build(cls, root: Path, top_k: int = 200) -> tuple[PeerIndex, SplitStats]:
        nodes, stats = split_documents(load_documents(root))
        return cls(root, nodes, top_k), stats

    def set_top_k(self, k: int) -> None:
        self._retriever.similarity_top_k = min(k, max(1, self.nodes))

    def persist(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._retriever.persist(str(directory))

    def chunks(self, question: str) -> list[tuple[str, float, int, int]]:
        """(repo-relative path, score, start line, end line) of the best chunks, best first."""
        out = []
        for hit in self._retriever.retrieve(question):
            rel = self._relative(str(hit.node.metadata.get("file_path", "")))
            start, end = self._lines(rel, hit.node.start_char_idx, hit.node.end_char_idx)
            out.append((rel, float(hit.score or 0.0), start, end))
        return out

    def rank_files(self, question: str) -> list[str]:
        return list(dict.fromkeys(c[0] for c in self.chunks(question)))

    def _relative(self, path: str) -> str:
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def _lines(self, rel: str, start: int | None, end: int | None) -> tuple[int, int]:
        """1-based lines of a node's character span (0, 0 when the splitter kept none)."""
        if start is None or end is None:
            return 0, 0
        if rel not in self._texts:
            try:
                self._texts[rel] = (self.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                self._texts[rel] = ""
        text = self._texts[rel]
        return text.count("\n", 0, start) + 1, text.count("\n", 0, max(start, end - 1)) + 1
