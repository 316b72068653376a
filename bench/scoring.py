"""File- and function-level retrieval metrics, with the semantics of the shared `eval/score.py`.

`case_metrics` and `aggregate` reproduce score.py exactly (same keys, same
rounding, duplicates in a ranking ignored) so numbers from this harness and
from `python3 score.py cases.jsonl preds.jsonl` agree; a test checks that
against the shared file when it is present. `function_hit` adds hit@k on
`gold_functions` (`path::Class.method`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

KS = (1, 3, 5, 10, 20)
FUNCTION_K = 5
# SWE-bench names a second definition of one name `name_1` (a property's setter, an overload).
_DUPLICATE_SUFFIX = re.compile(r"_\d+$")


def unique(ranked: Iterable[str]) -> list[str]:
    """First occurrence of each item, order kept."""
    return list(dict.fromkeys(ranked))


def case_metrics(ranked: Sequence[str], gold: Iterable[str]) -> dict[str, float]:
    """recall@k, acc@k, hit@k for k in KS, MRR and binary nDCG@10 of one case."""
    uniq = unique(ranked)
    wanted = set(gold)
    m: dict[str, float] = {}
    for k in KS:
        inter = len(set(uniq[:k]) & wanted)
        m[f"recall@{k}"] = inter / len(wanted)
        m[f"acc@{k}"] = float(inter == len(wanted))
        m[f"hit@{k}"] = float(inter > 0)
    first = next((i for i, p in enumerate(uniq) if p in wanted), None)
    m["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    dcg = sum(1.0 / math.log2(i + 2) for i, p in enumerate(uniq[:10]) if p in wanted)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), 10)))
    m["ndcg@10"] = dcg / idcg
    return m


def aggregate(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Macro average of each metric over cases, rounded like score.py."""
    if not rows:
        return {}
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]}


def function_matches(predicted: str, gold: str) -> bool:
    """`path::A.b` is found by `path::A.b`, a def nested in it, or its `_N`-less name."""
    base = _DUPLICATE_SUFFIX.sub("", gold)
    return any(predicted == g or predicted.startswith(g + ".") for g in {gold, base})


def function_hit(ranked: Sequence[str], gold: Iterable[str], k: int = FUNCTION_K) -> float:
    """1.0 when any gold function is among the top-k distinct predicted functions."""
    top = unique(ranked)[:k]
    return float(any(function_matches(p, g) for g in gold for p in top))


def first_rank(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """1-based rank of the first gold item among distinct items, None if absent."""
    wanted = set(gold)
    return next((i + 1 for i, p in enumerate(unique(ranked)) if p in wanted), None)
