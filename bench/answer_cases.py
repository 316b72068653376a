"""Questions for the answer evaluation, with the line ranges that answer them.

One JSON object a line:

    {"id", "repo" ("owner/name"), "commit", "kind", "question",
     "gold": [{"path", "start", "end"}], "decoys": [...], "target": [...], "notes"}

`kind` is one of KINDS. `gold` holds the 1-based inclusive ranges whose lines answer
the question (empty for `unanswerable`: the code does not answer it and "not found" is
right). `decoys` (optional) are the ranges a careless lookup would give instead: the
same name defined elsewhere, or calls of another function that shares the name.
`target` (optional, for `callers`) is the definition asked about, from its first line
to its last: a citation holding that first line shows the definition, not a call site.
Systems see only the question and the repository; the rest is for scoring.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cases import CaseError, read_cases

KINDS = ("definition", "callers", "how", "architecture", "unanswerable")


@dataclass(frozen=True, slots=True)
class Span:
    """A file's lines `start`..`end` (1-based, inclusive)."""

    path: str
    start: int
    end: int

    def overlaps(self, other: Span) -> bool:
        return self.path == other.path and self.start <= other.end and other.start <= self.end

    @property
    def label(self) -> str:
        return f"{self.path}:L{self.start}-L{self.end}"


@dataclass(frozen=True, slots=True)
class AnswerCase:
    id: str
    repo: str
    commit: str
    kind: str
    question: str
    gold: tuple[Span, ...]
    decoys: tuple[Span, ...] = ()
    target: tuple[Span, ...] = ()
    notes: str = ""

    def is_target(self, cite: Span) -> bool:
        """Whether `cite` shows the definition asked about (it holds its first line)."""
        return any(t.path == cite.path and cite.start <= t.start <= cite.end for t in self.target)


def load_answer_cases(paths: Sequence[Path]) -> list[AnswerCase]:
    return read_cases(paths, lambda line, where, _: _parse(line, where))


def _parse(line: str, where: str) -> AnswerCase:
    try:
        row = json.loads(line)
        case = AnswerCase(
            id=str(row["id"]),
            repo=str(row["repo"]),
            commit=str(row["commit"]),
            kind=str(row["kind"]),
            question=str(row["question"]),
            gold=_spans(row["gold"]),
            decoys=_spans(row.get("decoys") or []),
            target=_spans(row.get("target") or []),
            notes=str(row.get("notes", "")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CaseError(f"{where}: not a valid case ({exc})") from exc
    if case.kind not in KINDS:
        raise CaseError(f"{where}: kind {case.kind!r} is not one of {', '.join(KINDS)}")
    if (case.kind == "unanswerable") != (not case.gold):
        raise CaseError(f"{where}: gold must be empty exactly for unanswerable questions")
    return case


def _spans(rows: list[dict[str, Any]]) -> tuple[Span, ...]:
    spans = tuple(Span(str(r["path"]), int(r["start"]), int(r["end"])) for r in rows)
    for span in spans:
        if not 1 <= span.start <= span.end:
            raise ValueError(f"bad line range {span.label}")
    return spans
