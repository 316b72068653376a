"""Streamed answers end to end, streaming on and off side by side (issue 15's figures).

    .venv/bin/python bench/streaming.py --out bench/results/streaming.json
    .venv/bin/python bench/streaming.py --questions 10 --surfaces slack-http,discord-mention

The fake OpenAI server writes a 600-token answer at 40 tokens a second after a 300 ms
first token (a non-streamed request is answered when that stream would have ended).
The same questions (about psf/requests: SWE-QA's, then symbol questions) are sent to
each surface, once with CODECITE_STREAM on and once off:
  slack-http      mentions as signed events to codecite's own HTTP server (real Bolt)
  slack-socket    the same over Socket Mode (real SocketModeHandler, fake WebSocket)
  slack-command   `/codecite ask ...` over HTTP (top level: one message, updated)
  slack-refused   mentions where the workspace refuses chat streaming (`not_allowed`)
  discord-mention mentions over the fake gateway (real discord.py client)
  discord-slash   `/ask` over the fake gateway (deferred, then its webhook)
`--concurrency` askers each send a question and wait for its answer to finish before
the next; the Core has twice as many answer workers (an asker's next question may come
while the worker of its last answer is still finishing), so nobody waits in line.
Per surface and mode: time from the event being sent to the first call that put answer
text on screen, and to the last change of the answer (p50, p95); Web API / REST calls
per answer (every call, and those that put or changed text: median, max); how the text
got there; and defects (answers never finished, numbered sentences of the model's
answer lost or shown twice in the final text, calls the platform refused). Exit status
1 on a lost, repeated or unfinished answer. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import stream_discord, stream_slack
from bench.pg_answers import build_questions
from bench.postgres_state import CASES, CLEARED, MIRROR, checkout
from bench.stream_answers import Pace, expected_markers, index_home, make_core, paced_model
from bench.stream_measure import Load, Measured, defects, report, summarize
from bot.core import Core

Runner = Callable[[str, Core, Load], list[Measured]]
RUNNERS: dict[str, Runner] = {
    **{s: stream_slack.run for s in stream_slack.SURFACES},
    **{s: stream_discord.run for s in stream_discord.SURFACES},
}
AIM_FIRST_TEXT_P95 = 1.5  # seconds, streamed (the aim)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--corpus", type=Path, default=MIRROR, help="a git repository or a directory")
    p.add_argument("--cases", type=Path, default=CASES, help="questions (sweqa jsonl)")
    p.add_argument("--cases-repo", default="psf/requests", help="whose cases to ask")
    p.add_argument("--questions", type=int, default=50, help="per surface and mode")
    p.add_argument("--concurrency", type=int, default=10, help="questions in flight at once")
    p.add_argument("--tokens", type=int, default=600, help="the model's answer length")
    p.add_argument("--rate", type=float, default=40.0, help="tokens a second")
    p.add_argument("--first-token", type=float, default=0.3, help="seconds to the first token")
    p.add_argument("--surfaces", default=",".join(RUNNERS), help="comma-separated")
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("--out", type=Path, help="write the results here as JSON")
    args = p.parse_args(argv)
    unknown = set(args.surfaces.split(",")) - set(RUNNERS)
    if unknown:
        p.error(f"unknown surface(s): {', '.join(sorted(unknown))}; known: {', '.join(RUNNERS)}")
    return args


def measure(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    started = time.perf_counter()
    load_before = os.getloadavg()
    corpus = checkout(args.corpus, scratch / "corpus")
    questions = build_questions(corpus, args.cases, args.cases_repo, args.questions, args.seed)
    template = index_home(corpus, scratch / "template", corpus.name)
    pace = Pace(args.tokens, args.rate, args.first_token)
    markers = expected_markers(pace.tokens)
    # Past three times the writing time (plus a margin) an answer counts as unfinished.
    plan = Load(tuple(questions), args.concurrency, 3 * pace.writing_seconds + 30, tuple(markers))
    rows = []
    with paced_model(pace) as model:
        for surface in args.surfaces.split(","):
            for stream in (True, False):
                home = scratch / f"{surface}-{'on' if stream else 'off'}"
                core = make_core(
                    template, home, model.base_url, stream=stream, workers=2 * args.concurrency
                )
                began = time.perf_counter()
                try:
                    answers = RUNNERS[surface](surface, core, plan)
                finally:
                    core.close()
                row = {"surface": surface, "stream": stream, **summarize(answers)}
                row["seconds"] = round(time.perf_counter() - began, 1)
                rows.append(row)
                print(_progress(row), flush=True)
    return {
        "pace": asdict(pace) | {"answer_sentences": len(markers)},
        "questions": len(questions),
        "concurrency": args.concurrency,
        "corpus": str(args.corpus),
        "load": {"before": _rounded(load_before), "after": _rounded(os.getloadavg())},
        "seconds": round(time.perf_counter() - started, 1),
        "runs": rows,
    }


def _rounded(load: Sequence[float]) -> list[float]:
    return [round(x, 2) for x in load]


def _progress(row: dict[str, Any]) -> str:
    mode = "streamed" if row["stream"] else "whole"
    return (
        f"{row['surface']} {mode}: {row['n']} answers in {row['seconds']} s, first text p95 "
        f"{row['first_text_p95_s']:.2f} s, final p95 {row['final_p95_s']:.2f} s"
    )


def verdict(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per surface: the streamed first-text p95 against the aim and the whole one."""
    lines = []
    by = {(r["surface"], r["stream"]): r for r in rows}
    for surface in dict.fromkeys(r["surface"] for r in rows):
        on, off = by.get((surface, True)), by.get((surface, False))
        if on is None or off is None:
            continue
        met = "met" if on["first_text_p95_s"] < AIM_FIRST_TEXT_P95 else "MISSED"
        lines.append(
            f"{surface}: first text p95 {on['first_text_p95_s']:.2f} s streamed vs "
            f"{off['first_text_p95_s']:.2f} s whole (aim < {AIM_FIRST_TEXT_P95} s: {met})"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for name in [n for n in os.environ if n.startswith(CLEARED)]:
        del os.environ[name]
    scratch = Path(tempfile.mkdtemp(prefix="codecite-streambench-"))
    try:
        result = measure(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    pace = result["pace"]
    print(
        f"\n{result['questions']} questions per surface and mode, {result['concurrency']} at "
        f"once; the model writes {pace['tokens']} tokens at {pace['rate']:g}/s after "
        f"{pace['first_token']:g} s; whole run {result['seconds']} s; load (1, 5, 15 min) "
        f"{result['load']['before']} before, {result['load']['after']} after"
    )
    print(report(result["runs"]))
    print("\n".join(verdict(result["runs"])))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    broken = [r for r in result["runs"] if _lost_or_hung(r)]
    for row in broken:
        print(f"FAILED: {row['surface']}: {'; '.join(defects(row))}", file=sys.stderr)
    return 1 if broken else 0


def _lost_or_hung(row: dict[str, Any]) -> bool:
    return bool(row["unfinished"] or row["missing_sentences"] or row["repeated_sentences"])


if __name__ == "__main__":
    raise SystemExit(main())
