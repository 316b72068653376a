"""bench/scale.py's figures: child results summarised (medians over runs), and its tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.common import ChildResult, median, percentile, ratio
from bench.report import table

MB = 1e6
PEERS = {"bm25s": "bm25s", "code": "bm25s, code tokens"}


def _failed(name: str, runs: Sequence[ChildResult]) -> str | None:
    bad = [r for r in runs if r.out is None]
    return f"{name}: {bad[0].error[-400:]}" if bad else None


def summarise_cold(runs: Mapping[str, Sequence[ChildResult]], scope: str) -> dict[str, Any]:
    """Fresh-process figures; any failed process stops the bench (its numbers would lie)."""
    for name, rs in runs.items():
        error = _failed(name, rs)
        if error:
            raise SystemExit(f"cold start failed, {error}")
    search, scoped = runs["search"], runs["scoped"]
    imports = [float((r.out or {})["imports_s"]) for r in runs["imports"]]
    imports_cpu = [float((r.out or {})["imports_cpu_s"]) for r in runs["imports"]]
    wrong = [r.out for r in scoped if (r.out or {}).get("repo") != scope]
    if wrong:
        raise SystemExit(f"a search scoped to {scope} answered from elsewhere: {wrong[0]}")
    return {
        # process start to its first result line on stdout; `exit_s` to its exit
        "first_result_s": round(median([r.first_line or r.wall for r in search]), 3),
        "first_result_runs_s": [round(r.first_line or r.wall, 3) for r in search],
        "exit_s": round(median([r.wall for r in search]), 3),
        # CPU seconds of the whole process (to its exit): what a busy machine sways least
        "cpu_s": round(median([r.cpu for r in search]), 3),
        "imports_cpu_s": round(median(imports_cpu), 3),
        "peak_rss_mb": round(median([r.peak_rss for r in search]) / MB, 1),
        "startup_s": round(median([r.wall for r in runs["startup"]]), 3),
        "imports_s": round(median(imports), 3),
        "heavy_at_import": (runs["imports"][0].out or {}).get("heavy", []),
        "scoped_first_result_s": round(median([r.first_line or r.wall for r in scoped]), 3),
        "scoped_peak_rss_mb": round(median([r.peak_rss for r in scoped]) / MB, 1),
    }


def summarise_warm(runs: Sequence[ChildResult]) -> dict[str, Any]:
    """Medians over runs of each run's p50/p95 (unscoped and scoped) and memory."""
    good = [r.out for r in runs if r.out is not None]
    if not good:
        return {"ok": 0, "error": runs[-1].error[-400:] if runs else "not run"}

    def pct(key: str, q: float) -> float:
        return round(median([percentile(o[key], q) for o in good]), 2)

    def med(key: str) -> float:
        return median([float(o[key]) for o in good])

    first = good[0]
    build = "first_search" if "first_search_s" in first else "build"
    return {
        "ok": len(good),
        "questions": len(first["times_ms"]),
        "p50_ms": pct("times_ms", 0.5),
        "p95_ms": pct("times_ms", 0.95),
        "scoped_p50_ms": pct("scoped_times_ms", 0.5),
        "scoped_p95_ms": pct("scoped_times_ms", 0.95),
        "build_s": round(med(f"{build}_s"), 3),
        "build_cpu_s": round(med(f"{build}_cpu_s"), 3),
        "serving_rss_mb": round(med("serving_rss") / MB, 1),
        "peak_rss_mb": round(median([r.peak_rss for r in runs if r.out]) / MB, 1),
        "empty": first["empty"],
        "outside_scope": max(int(o["outside_scope"]) for o in good),
        **{k: first[k] for k in ("documents", "heavy", "version") if k in first},
    }


def _pair(a: Any, b: Any, digits: int = 1) -> str:
    if a is None or b is None:
        return "-"
    return f"{a:.{digits}f} / {b:.{digits}f}"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def scale_table(rows: Sequence[Mapping[str, Any]]) -> str:
    header = [
        "repos", "added", "files", "chunks", "index MB", "ingest s", "first result s",
        "its cpu s", "start + imports s", "scoped first s", "fresh peak RSS MB", "status s",
        "unscoped p50 / p95 ms", "scoped p50 / p95 ms", "serving RSS MB", "load",
    ]  # fmt: skip
    body = []
    for row in rows:
        cold, ours = row["cold"], row["ours"]
        added = row["added"][0] + (f" +{len(row['added']) - 1}" if len(row["added"]) > 1 else "")
        body.append(
            [
                row["label"], added, f"{row['files']:,}", f"{row['chunks']:,}",
                f"{row['index_bytes'] / MB:.1f}", f"{row['ingest_s']:.1f}",
                f"{cold['first_result_s']:.2f}", f"{cold['cpu_s']:.2f}",
                _pair(cold["startup_s"], cold["imports_s"], 2),
                f"{cold['scoped_first_result_s']:.2f}", f"{cold['peak_rss_mb']:.0f}",
                f"{row['status']['median_s']:.2f}",
                _pair(ours.get("p50_ms"), ours.get("p95_ms")),
                _pair(ours.get("scoped_p50_ms"), ours.get("scoped_p95_ms")),
                _num(ours.get("serving_rss_mb"), 0), _pair(row["load"][0], row["load"][1], 2),
            ]
        )  # fmt: skip
    return table(header, body)


def peer_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """codecite beside each bm25s variant: latency, build, memory, and ours/peer ratios."""
    header = [
        "repos", "chunks", "system", "p50 / p95 ms", "scoped p50 / p95 ms", "build s (cpu)",
        "serving RSS MB", "peak RSS MB", "ratio p50 / p95", "ratio build", "ratio serving RSS",
    ]  # fmt: skip
    body: list[list[Any]] = []
    for row in rows:
        ours = row["ours"]
        for key, name in (("ours", "codecite"), *PEERS.items()):
            r = row.get(key)
            if not r:
                continue
            if not r.get("ok"):
                body.append([row["label"], f"{row['chunks']:,}", name, r.get("error", "")[:60]])
                body[-1] += [None] * (len(header) - 4)
                continue
            ratios: list[str | None] = [None, None, None]
            if key != "ours" and ours.get("ok"):
                ratios = [
                    _pair(ratio(ours["p50_ms"], r["p50_ms"]), ratio(ours["p95_ms"], r["p95_ms"])),
                    _num(ratio(ours["build_s"], r["build_s"]), 2),
                    _num(ratio(ours["serving_rss_mb"], r["serving_rss_mb"]), 2),
                ]
            body.append(
                [
                    row["label"], f"{row['chunks']:,}", name,
                    _pair(r["p50_ms"], r["p95_ms"], 2),
                    _pair(r["scoped_p50_ms"], r["scoped_p95_ms"], 2),
                    f"{r['build_s']:.2f} ({r['build_cpu_s']:.2f})", _num(r["serving_rss_mb"], 0),
                    _num(r["peak_rss_mb"], 0), *ratios,
                ]
            )  # fmt: skip
    return table(header, body)


def render(result: Mapping[str, Any]) -> str:
    rows = result["rows"]
    q = result["questions"]
    lines = [
        f"codecite --help: {result['help']['median_s']:.2f} s (median of "
        f"{len(result['help']['runs_s'])}); questions: {q['all']} ({q['real']} real), "
        f"scoped to {result['scope']}; {result['cpus']} cpus",
        "",
        scale_table(rows),
    ]
    if any(k in row for row in rows for k in PEERS):
        lines += ["", peer_table(rows)]
    warnings = [
        f"row {row['label']}: {row[k]['outside_scope']} scoped hits outside the scope ({k})"
        for row in rows
        for k in ("ours", *PEERS)
        if row.get(k, {}).get("outside_scope")
    ]
    return "\n".join(lines + warnings)
