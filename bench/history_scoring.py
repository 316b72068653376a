"""Scoring rules of the history evaluation, and the tables they add up to.

Each system returns, per question, the commits it cites in order (for codecite twice: the
answer's commit citations, and `search --json`'s commit hits). Before scoring, a list is
de-duplicated in order and cut to its first `CITED_DEPTH` commits (a chat answer lists a
handful; a peer printing every match would otherwise be scored on hundreds). A cited sha
matches a gold sha when it is a prefix of it of at least 7 hex digits (abbreviations count).

  top1   the first cited commit is gold
  top5   a gold commit is among the first five cited
  exact  ("who" cases) the first cited commit is the gold `git log -1 -L` commit: top1,
         reported under its own name because the aim for it is separate
  share  ("since" cases) the share of cited commits that are gold (0 when none is cited):
         the answer to "what changed in X since T" is right in proportion to how much of
         what it cites did change X after T
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

CITED_DEPTH = 10
MIN_PREFIX = 7
_HEX = re.compile(r"[0-9a-f]+")
GROUPS = (
    ("when", ("when",)),
    ("why", ("why",)),
    ("when+why", ("when", "why")),
    ("who", ("who",)),
    ("since", ("since",)),
    ("ALL", ("when", "why", "who", "since")),
)


@dataclass(frozen=True, slots=True)
class CaseScore:
    top1: bool
    top5: bool
    exact: bool | None  # "who" cases only
    share: float | None  # "since" cases only
    cited: int  # commits scored (after de-duplication and the depth cut)


def normalised(cited: Iterable[str]) -> list[str]:
    """Lower-case hex shas, first occurrence kept, cut to CITED_DEPTH; non-shas dropped."""
    out: list[str] = []
    for sha in cited:
        sha = sha.strip().lower()
        if len(sha) >= MIN_PREFIX and _HEX.fullmatch(sha) and sha not in out:
            out.append(sha)
    return out[:CITED_DEPTH]


def is_gold(sha: str, gold: Iterable[str]) -> bool:
    return len(sha) >= MIN_PREFIX and any(g.lower().startswith(sha) for g in gold)


def score_case(kind: str, gold: Sequence[str], cited: Iterable[str]) -> CaseScore:
    shas = normalised(cited)
    hits = [is_gold(sha, gold) for sha in shas]
    top1 = bool(hits) and hits[0]
    return CaseScore(
        top1=top1,
        top5=any(hits[:5]),
        exact=top1 if kind == "who" else None,
        share=(sum(hits) / len(hits) if hits else 0.0) if kind == "since" else None,
        cited=len(shas),
    )


def aggregate(scores: Sequence[CaseScore]) -> dict[str, Any]:
    """n, and the mean of each measure over the cases it applies to (None when none does)."""

    def mean(values: list[float]) -> float | None:
        return round(statistics.fmean(values), 3) if values else None

    return {
        "n": len(scores),
        "top1": mean([float(s.top1) for s in scores]),
        "top5": mean([float(s.top5) for s in scores]),
        "exact": mean([float(s.exact) for s in scores if s.exact is not None]),
        "share": mean([s.share for s in scores if s.share is not None]),
        "cited": mean([float(s.cited) for s in scores]),
    }


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per system and source, per question kind group (and per repository): the aggregates.

    `rows` are the harness's per-case results: {"repo", "kind", "scores": {label: CaseScore}}
    where label is "gitgrep", "codecite answer", "codecite search".
    """
    labels = sorted({label for row in rows for label in row["scores"]})
    out: list[dict[str, Any]] = []
    repos = sorted({row["repo"] for row in rows})
    for label in labels:
        for repo in ("ALL", *repos):
            for group, kinds in GROUPS:
                chosen = [
                    row["scores"][label]
                    for row in rows
                    if label in row["scores"]
                    and row["kind"] in kinds
                    and repo in ("ALL", row["repo"])
                ]
                if chosen:
                    out.append({"system": label, "repo": repo, "kinds": group, **aggregate(chosen)})
    return out
