"""One question of the history evaluation: what it asks, of which repository, and its gold.

A case file is JSONL; every row has `id`, `repo` (owner/name), `commit` (40 hex, the pinned
commit the repository is indexed at), `kind`, `question`, `gold_commits` (full shas) and
`gold_note` (how the gold was derived). Kinds and what each row adds to derive its gold:

  when, why  `changelog` ({path, line}: where the entry stands; the builder adds its
             `version` and verbatim `entry`) and `numbers` (the PR/issue numbers it names)
  who        `path`, `symbol` and `lines` [start, end]: the symbol's current lines
  since      `tag` and `area` (a path prefix)

The systems under test see `question` only (and the repository at `commit`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cases import CaseError

KINDS = ("when", "why", "who", "since")
_SHA = re.compile(r"[0-9a-f]{40}")
_NEEDS = {
    "when": ("changelog",),
    "why": ("changelog",),
    "who": ("path", "symbol", "lines"),
    "since": ("tag", "area"),
}


@dataclass(frozen=True, slots=True)
class HistoryCase:
    id: str
    repo: str
    commit: str
    kind: str
    question: str
    gold_commits: tuple[str, ...]
    row: dict[str, Any]  # the whole row as read, for the builder and the report


def parse_case(row: dict[str, Any], where: str) -> HistoryCase:
    try:
        case = HistoryCase(
            id=str(row["id"]),
            repo=str(row["repo"]),
            commit=str(row["commit"]),
            kind=str(row["kind"]),
            question=str(row["question"]),
            gold_commits=tuple(str(s) for s in row["gold_commits"]),
            row=row,
        )
    except (KeyError, TypeError) as exc:
        raise CaseError(f"{where}: not a valid history case (missing {exc})") from exc
    if case.kind not in KINDS:
        raise CaseError(f"{where}: kind {case.kind!r} is not one of {', '.join(KINDS)}")
    if not _SHA.fullmatch(case.commit):
        raise CaseError(f"{where}: commit must be 40 lowercase hex digits")
    missing = [k for k in _NEEDS[case.kind] if k not in row]
    if missing:
        raise CaseError(f"{where}: a {case.kind} case needs {', '.join(missing)}")
    if not case.question.strip():
        raise CaseError(f"{where}: empty question")
    return case


def load_history_cases(paths: Sequence[Path]) -> list[HistoryCase]:
    cases: list[HistoryCase] = []
    seen: set[str] = set()
    for path in paths:
        for number, row in read_rows(path):
            case = parse_case(row, f"{path}:{number}")
            if case.id in seen:
                raise CaseError(f"{path}:{number}: duplicate case id {case.id!r}")
            seen.add(case.id)
            cases.append(case)
    return cases


def read_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CaseError(f"cannot read {path}: {exc.strerror}") from exc
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise CaseError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise CaseError(f"{path}:{number}: a case is a JSON object")
        rows.append((number, row))
    return rows


def write_rows(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
