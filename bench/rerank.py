"""Scratch re-ranking experiments on codecite's retrieved chunks (for the retrieval lead).

    .venv/bin/python bench/eval_retrieval.py ... --chunks chunks.jsonl   # once: top-200 chunks
    .venv/bin/python bench/rerank.py --cases swebench_dev.jsonl --cases sweqa_dev.jsonl \\
        --chunks chunks.jsonl [--clones /work/.mirror]     # --clones adds whole-file BM25 fusion

Each strategy re-scores the same `core.search(top_k=200)` output and ranks
files by their best re-scored chunk; the table shows what a change in
bot/retrieval would buy before anyone writes it. Rules are general (test
paths, prose files, repository tooling, how many chunks of a file match),
never repository-specific.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bm25files import Bm25Files, is_test_path
from bench.cases import Case, find_clone, load_cases, materialise, plan
from bench.report import table
from bench.scoring import aggregate, case_metrics
from bot.retrieval.query import analyze

CODE_EXTENSIONS: tuple[str, ...] = tuple(
    ".py .pyi .js .ts .tsx .go .java .rs .c .h .cpp .cc .hpp .cs .rb .php".split()
)
TOOLING_DIRS = (".github/", ".gitlab/", ".circleci/", "changelog/", "changes/")
_MENTIONS_TESTS = re.compile(r"\b(tests?|testing|fixtures?|conftest)\b", re.I)
_MENTIONS_DOCS = re.compile(r"\b(docs?|documentation|changelog|readme|tutorial)\b", re.I)
COLUMNS = ("acc@1", "acc@5", "hit@1", "hit@5", "mrr", "ndcg@10")


@dataclass(frozen=True, slots=True)
class Chunk:
    path: str
    start: int
    end: int
    symbol: str
    kind: str
    score: float


Strategy = Callable[[str, list[Chunk], "CaseInfo"], list[str]]


def is_code(path: str) -> bool:
    return path.lower().endswith(CODE_EXTENSIONS)


def is_tooling(path: str) -> bool:
    return path.startswith(TOOLING_DIRS)


def is_nested_vendor(path: str) -> bool:
    """`pkg/packages/lib/...`: a library vendored inside a package (not a root monorepo dir)."""
    parts = path.split("/")
    return "packages" in parts[1:-1]


@dataclass(frozen=True, slots=True)
class Prior:
    test: float = 1.0  # tests, unless the question is about tests
    noncode: float = 1.0  # prose and config, when the question carries code
    tooling: float = 1.0  # .github/, changelog fragments
    vendor: float = 1.0  # nested vendored packages
    length: float = 0.0  # weight of log(file lines) / log(max file lines)

    def factor(self, question: str, code_question: bool, path: str) -> float:
        f = 1.0
        if is_test_path(path) and not _MENTIONS_TESTS.search(question):
            f *= self.test
        if code_question and not is_code(path) and not _MENTIONS_DOCS.search(question):
            f *= self.noncode
        if is_tooling(path):
            f *= self.tooling
        if is_nested_vendor(path):
            f *= self.vendor
        return f


def file_scores(chunks: Sequence[Chunk], depth: int, decay: float) -> dict[str, float]:
    """A file's score: its best chunk, plus decayed credit for its next `depth - 1` chunks."""
    per_file: dict[str, list[float]] = {}
    for c in chunks:
        per_file.setdefault(c.path, []).append(c.score)
    return {
        p: sum(s * decay**i for i, s in enumerate(sorted(v, reverse=True)[:depth]))
        for p, v in per_file.items()
    }


def strategy(
    prior: Prior = Prior(),
    depth: int = 1,
    decay: float = 0.5,
    file_w: float = 0.0,
    define_w: float = 0.0,
    frame_w: float = 0.0,
) -> Strategy:
    def rank(question: str, chunks: list[Chunk], info: CaseInfo) -> list[str]:
        scores = file_scores(chunks, depth, decay)
        for weight, extra in (
            (file_w, info.bm25),
            (define_w, info.defines),
            (frame_w, info.frames),
        ):
            if weight:
                top = max(extra.values(), default=0.0) or 1.0
                for path, s in extra.items():
                    scores[path] = scores.get(path, 0.0) + weight * s / top
        code_question = analyze(question).is_code_question
        adjusted = {}
        for path, s in scores.items():
            size = 1.0
            if prior.length and info.lines:
                size = 1 + prior.length * math.log1p(info.lines.get(path, 1)) / info.log_max
            adjusted[path] = s * size * prior.factor(question, code_question, path)
        return sorted(adjusted, key=lambda p: -adjusted[p])

    return rank


@dataclass(frozen=True, slots=True)
class CaseInfo:
    bm25: dict[str, float]  # whole-file BM25 as 60/(60+rank)
    lines: dict[str, int]  # lines per file of the tree
    log_max: float = 1.0
    defines: dict[str, float] = field(default_factory=dict)  # file -> idf of names it defines
    frames: dict[str, float] = field(default_factory=dict)  # file -> traceback depth weight


NO_INFO = CaseInfo({}, {})
HALF = Prior(test=0.5, noncode=0.5, tooling=0.5, vendor=0.5)
STRATEGIES: dict[str, Strategy] = {
    "as retrieved": strategy(),
    "tests x0.5": strategy(Prior(test=0.5)),
    "non-code x0.5 (code questions)": strategy(Prior(noncode=0.5)),
    "tooling x0.5": strategy(Prior(tooling=0.5)),
    "nested vendor x0.5": strategy(Prior(vendor=0.5)),
    "all priors x0.5": strategy(HALF),
    "all priors x0.3": strategy(Prior(test=0.3, noncode=0.3, tooling=0.3, vendor=0.3)),
    "length prior .3": strategy(Prior(length=0.3)),
    "top-3 chunks": strategy(depth=3),
    "file bm25 w1": strategy(file_w=1.0),
    "priors x0.5 + top-3": strategy(HALF, depth=3),
    "priors x0.5 + bm25 w1": strategy(HALF, file_w=1.0),
    "priors x0.5 + length .3": strategy(Prior(0.5, 0.5, 0.5, 0.5, 0.3)),
    "priors x0.5 + top-3 + bm25 w1": strategy(HALF, depth=3, file_w=1.0),
    "priors x0.5 + top-3 + bm25 + length": strategy(Prior(0.5, 0.5, 0.5, 0.5, 0.3), 3, 0.5, 1.0),
    "defines w.5": strategy(define_w=0.5),
    "defines w1": strategy(define_w=1.0),
    "frames w.5": strategy(frame_w=0.5),
    "frames w1": strategy(frame_w=1.0),
    "priors + bm25 + defines .5 + frames .5": strategy(HALF, file_w=1.0, define_w=0.5, frame_w=0.5),
    "priors + top-3 + bm25 + defines .5 + frames .5": strategy(
        HALF, depth=3, file_w=1.0, define_w=0.5, frame_w=0.5
    ),
    "priors + defines .5 + frames .5": strategy(HALF, define_w=0.5, frame_w=0.5),
}


def load_chunks(
    path: Path, system: str = "codecite", protocol: str = "per-commit"
) -> dict[str, list[Chunk]]:
    out: dict[str, list[Chunk]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["system"] == system and row.get("protocol", "per-commit") == protocol:
            out[row["id"]] = [Chunk(*c) for c in row["chunks"]]
    return out


def case_info(cases: list[Case], clones: Path, work: Path) -> dict[str, CaseInfo]:
    """Per case: whole-file BM25 (code tokens, all text files) and file sizes at its commit."""
    repos = {c.repo: find_clone(clones, c.repo) for c in cases}
    out: dict[str, CaseInfo] = {}
    for step in plan(cases, repos, "per-commit"):
        tree = materialise(repos[step.repo], step.commit, work / step.repo.replace("/", "+"))
        texts = {
            p.relative_to(tree).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(tree.rglob("*"))
            if p.is_file() and not p.is_symlink()
        }
        lines = {path: text.count("\n") + 1 for path, text in texts.items()}
        log_max = math.log1p(max(lines.values(), default=1))
        docs = [(p, t) for p, t in texts.items() if p.endswith((".py", ".md", ".rst", ".txt"))]
        index = Bm25Files(docs, tokenizer="code")
        defined = definitions(texts)
        for case in step.cases:
            ranked = index.rank(case.question, k=100)
            bm25 = {path: 60 / (60 + rank) for rank, (path, _) in enumerate(ranked)}
            out[case.id] = CaseInfo(
                bm25,
                lines,
                log_max,
                defines=definition_scores(case.question, defined),
                frames=frame_scores(case.question, list(texts)),
            )
        print(f"tree {step.repo}@{step.commit[:8]}", file=sys.stderr, flush=True)
    return out


_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.M)
_KEYWORDS = frozenset("def class return import from true false none self cls".split())


def definitions(texts: dict[str, str]) -> dict[str, set[str]]:
    """name -> code files (non-test) that define a function or class of that name."""
    out: dict[str, set[str]] = {}
    for path, text in texts.items():
        if path.endswith(".py") and not is_test_path(path):
            for name in _DEFINITION.findall(text):
                out.setdefault(name.lower(), set()).add(path)
    return out


def definition_scores(question: str, defined: dict[str, set[str]]) -> dict[str, float]:
    """Files defining names the question mentions, each name weighted by 1 / files defining it."""
    names = {s.rsplit(".", 1)[-1].lower() for s in analyze(question).symbols}
    scores: dict[str, float] = {}
    for name in names - _KEYWORDS:
        files = defined.get(name, set())
        for path in files:
            scores[path] = scores.get(path, 0.0) + 1.0 / len(files)
    return scores


def frame_scores(question: str, paths: list[str]) -> dict[str, float]:
    """Files named in the question; later traceback frames (nearer the error) weigh more."""
    mentioned = analyze(question).paths
    scores: dict[str, float] = {}
    for position, m in enumerate(mentioned, start=1):
        tail = "/" + m.lstrip("/")
        for path in paths:
            if path == m or ("/" + path).endswith(tail):
                scores[path] = max(scores.get(path, 0.0), position / len(mentioned))
    return scores


def evaluate(
    cases: list[Case], chunks: dict[str, list[Chunk]], infos: dict[str, CaseInfo]
) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for dataset in sorted({c.dataset for c in cases}):
        subset = [c for c in cases if c.dataset == dataset and c.id in chunks]
        for name, rank in STRATEGIES.items():
            if not infos and ("bm25" in name or "length" in name):
                continue
            metrics = [
                case_metrics(rank(c.question, chunks[c.id], infos.get(c.id, NO_INFO)), c.gold_files)
                for c in subset
            ]
            overall = aggregate(metrics)
            rows.append([dataset, name, len(subset), *(overall[k] for k in COLUMNS)])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", type=Path, action="append", required=True)
    ap.add_argument("--chunks", type=Path, required=True, help="from eval_retrieval --chunks")
    ap.add_argument("--clones", type=Path, help="enables whole-file BM25 fusion")
    ap.add_argument("--work", type=Path, default=Path("/tmp/codecite-rerank"))
    args = ap.parse_args(argv)
    cases = load_cases(args.cases)
    chunks = load_chunks(args.chunks)
    wanted = [c for c in cases if c.id in chunks]
    infos = case_info(wanted, args.clones, args.work) if args.clones else {}
    print(table(["dataset", "strategy", "n", *COLUMNS], evaluate(cases, chunks, infos)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
