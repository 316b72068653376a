"""The scale bench's peer: bm25s (the fastest Python BM25) over codecite's own chunks.

    scale_peer.py CHUNKS QUESTIONS TOKENS SCOPE   (run by bench/scale.py with the peer python)

CHUNKS is a JSONL export of the data directory's chunk rows (`export_chunks`), one
document per chunk: its path, symbol, header and text, the four fields codecite's
engine indexes, so both systems search the same words. TOKENS is `bm25s` (bm25s's
own `tokenize` with its defaults: lower case, `\\w\\w+`, English stopwords, no
stemmer) or `code` (codecite's code-aware tokens for documents, its question terms
for questions, from bot.text.tokens). Each question is answered unscoped and then
scoped to SCOPE's chunks (bm25s's `weight_mask`), top 10, as codecite's child does.
`build_s` is tokenising plus `BM25.index`; peak RSS includes the texts it read,
`serving_rss` is taken after they are let go. bm25s downloads nothing: it needs numpy
and scipy only (checked under `unshare -n`).
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit
from bench.ingest import _rss as rss_of
from bench.scale_corpus import ask_all, read_questions

TOP_K = 10
TOKENIZERS = ("bm25s", "code")


def export_chunks(index_file: Path, out: Path) -> int:
    """Every chunk row of a codecite index as `{"repo", "text"}` lines; returns the count."""
    conn = sqlite3.connect(f"file:{index_file}?mode=ro", uri=True)
    count = 0
    try:
        with out.open("w", encoding="utf-8") as sink:
            rows = conn.execute("SELECT repo, path, symbol, header, text FROM chunks ORDER BY rid")
            for repo, path, symbol, header, text in rows:
                doc = "\n".join(part for part in (path, symbol, header, text) if part)
                sink.write(json.dumps({"repo": repo, "text": doc}) + "\n")
                count += 1
    finally:
        conn.close()
    return count


def _read_chunks(path: str) -> tuple[list[str], list[str]]:
    repos, texts = [], []
    with open(path, encoding="utf-8") as source:
        for line in source:
            row = json.loads(line)
            repos.append(row["repo"])
            texts.append(row["text"])
    return repos, texts


def _tokenizers(kind: str) -> tuple[Callable[[list[str]], Any], Callable[[str], list[str]]]:
    """(documents -> what BM25.index takes, question -> its tokens)."""
    import bm25s

    if kind == "bm25s":

        def docs(texts: list[str]) -> Any:
            return bm25s.tokenize(texts, show_progress=False)

        def question(text: str) -> list[str]:
            tokens: list[list[str]] = bm25s.tokenize(text, show_progress=False, return_ids=False)
            return tokens[0]

        return docs, question
    from bot.text.tokens import code_tokens, query_terms

    return (lambda texts: [code_tokens(t) for t in texts]), query_terms


def run(chunks: str, questions_file: str, kind: str, scope: str) -> None:
    import bm25s
    import numpy as np

    repos, texts = _read_chunks(chunks)
    questions = read_questions(questions_file)
    tokenize_docs, tokenize_question = _tokenizers(kind)
    started, cpu = time.perf_counter(), time.process_time()
    retriever = bm25s.BM25()
    retriever.index(tokenize_docs(texts), show_progress=False)
    build, cpu = time.perf_counter() - started, time.process_time() - cpu
    count = len(texts)
    del texts
    gc.collect()
    mask = np.fromiter((r == scope for r in repos), dtype=np.float32, count=len(repos))
    k = min(TOP_K, count)

    def search(q: str, weights: Any = None) -> list[str]:
        found = retriever.retrieve(
            [tokenize_question(q)], k=k, show_progress=False, weight_mask=weights
        )
        return [repos[i] for i, s in zip(found.documents[0], found.scores[0], strict=True) if s > 0]

    result = ask_all(questions, search, lambda q: search(q, mask), scope)
    emit(
        {
            "documents": count,
            "build_s": build,
            "build_cpu_s": cpu,
            **result,
            "serving_rss": rss_of(os.getpid()),
            "version": bm25s.__version__,
        }
    )


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[3] not in TOKENIZERS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    run(*sys.argv[1:])
