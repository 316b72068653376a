"""The reference row: plain BM25 over whole non-test `.py` files (path + contents).

k1=0.9, b=0.4 (the Lucene/Pyserini defaults the shared README's numbers use).
Pure Python and numpy, no codecite code: a floor that any retrieval change
must clear. Tokenisers: `word` (lower-cased `\\w+` runs, identifiers kept
whole: what a search engine's standard analyser does with code), `alnum`
(also splits at `_`), `code` (codecite's own code-aware tokens).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

K1 = 0.9
B = 0.4
TEST_DIRS = frozenset({"test", "tests", "testing"})

_WORD = re.compile(r"\w+")
_ALNUM = re.compile(r"[A-Za-z0-9]+")


def _word(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _alnum(text: str) -> list[str]:
    return _ALNUM.findall(text.lower())


def _code(text: str) -> list[str]:
    from bot.text.tokens import code_tokens

    return code_tokens(text)


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "word": _word,
    "alnum": _alnum,
    "code": _code,
}


def is_test_path(path: str) -> bool:
    """tests/, testing/, test_*.py, *_test.py, conftest.py: what the reference row leaves out."""
    parts = path.split("/")
    name = parts[-1]
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def python_files(root: Path) -> list[str]:
    """Repo-relative paths of the non-test `.py` files under `root`, sorted."""
    out = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not is_test_path(rel):
            out.append(rel)
    return sorted(out)


class Bm25Files:
    """An in-memory BM25 index over whole documents (one per file)."""

    def __init__(
        self,
        docs: Sequence[tuple[str, str]],
        tokenizer: str = "word",
        k1: float = K1,
        b: float = B,
    ) -> None:
        self.paths = [p for p, _ in docs]
        self._tok = TOKENIZERS[tokenizer]
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        lengths = np.zeros(len(docs), dtype=np.float64)
        rows: dict[str, tuple[list[int], list[int]]] = {}
        for i, (path, text) in enumerate(docs):
            counts = Counter(self._tok(f"{path}\n{text}"))
            lengths[i] = sum(counts.values())
            for term, tf in counts.items():
                ids, tfs = rows.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(tf)
        avg = float(lengths.mean()) if len(docs) else 1.0
        self._norm = k1 * (1 - b + b * lengths / max(avg, 1e-9))
        self._k1 = k1
        n = len(docs)
        for term, (ids, tfs) in rows.items():
            self._postings[term] = (np.asarray(ids), np.asarray(tfs, dtype=np.float64))
        self._idf = {
            t: math.log(1 + (n - len(p[0]) + 0.5) / (len(p[0]) + 0.5))
            for t, p in self._postings.items()
        }

    @classmethod
    def from_tree(cls, root: Path, tokenizer: str = "word") -> Bm25Files:
        docs = [
            (rel, (root / rel).read_text(encoding="utf-8", errors="replace"))
            for rel in python_files(root)
        ]
        return cls(docs, tokenizer)

    def rank(self, query: str, k: int = 100) -> list[tuple[str, float]]:
        """Best files first; every query token counts (repeats add, as in a Lucene OR query)."""
        scores = np.zeros(len(self.paths), dtype=np.float64)
        for term, qtf in Counter(self._tok(query)).items():
            posting = self._postings.get(term)
            if posting is None:
                continue
            ids, tfs = posting
            scores[ids] += qtf * self._idf[term] * tfs * (self._k1 + 1) / (tfs + self._norm[ids])
        top = np.argsort(-scores, kind="stable")[:k]
        return [(self.paths[i], float(scores[i])) for i in top if scores[i] > 0]
