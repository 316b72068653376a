"""Plain-text tables for the evaluation results (stdout and bench/README.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

COLUMNS = ("acc@1", "acc@5", "hit@1", "hit@5", "recall@5", "mrr", "ndcg@10", "fn_hit@5")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-markdown table (also readable as plain text)."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    return "\n".join([line, rule, *body])


def run_table(run: Mapping[str, Any]) -> str:
    """One system x protocol x dataset: overall, then each repository."""
    title = f"{run['dataset']} / {run['protocol']} / {run['system']}"
    rows: list[list[Any]] = [["ALL", run["n"], *(run["overall"].get(c) for c in COLUMNS)]]
    for repo, m in run["by_repo"].items():
        rows.append([repo, m["n"], *(m.get(c) for c in COLUMNS)])
    return f"{title}\n" + table(["subset", "n", *COLUMNS], rows)


def side_by_side(runs: Sequence[Mapping[str, Any]]) -> str:
    """Every run's overall numbers, one row each, plus search latency."""
    header = ["dataset", "protocol", "system", "n", *COLUMNS, "p50 ms", "p95 ms"]
    rows = [
        [
            r["dataset"],
            r["protocol"],
            r["system"],
            r["n"],
            *(r["overall"].get(c) for c in COLUMNS),
            r["search_ms"]["p50"],
            r["search_ms"]["p95"],
        ]
        for r in runs
    ]
    return table(header, rows)
