"""Per-answer figures of the streaming bench, their summary per surface and mode, the table.

Every figure is read from what a fake server recorded for that one answer: the
calls it received (with their arrival times) and every state of every bot message.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bench.common import median, percentile
from bench.report import table
from bot.runtime.queue import in_line

_NOTE = re.compile(re.escape(in_line(7)).replace("7", r"\d+"))


@dataclass(frozen=True)
class Load:
    """What a run asks a surface, and how."""

    questions: tuple[str, ...]
    concurrency: int  # askers, each waiting for its answer to finish before the next
    timeout: float  # seconds after which an answer counts as unfinished
    markers: tuple[str, ...]  # the numbered sentences of the model's answer


@dataclass(frozen=True)
class Measured:
    """One answer, as the platform saw it; seconds are from the moment the event was sent."""

    first_text: float | None  # the first call that put answer text on screen
    final: float | None  # the last change of the answer's messages (None: never finished)
    calls: int  # Web API / REST calls made for this answer (reactions, lookups, typing...)
    text_calls: int  # of which put or changed answer text
    refused: tuple[str, ...]  # the errors of calls refused (a 429, `ok: false`...)
    route: str  # how the text reached the screen ("chat.startStream", "post+edits", ...)
    messages: int  # messages the answer occupies
    missing: int  # the model's numbered sentences absent from the final text
    repeated: int  # numbered sentences the final text shows more than once
    by_call: dict[str, int]  # how many of each method (Slack) or route (Discord)


def is_note(text: str) -> bool:
    """A "you're #3 in line" note: progress, not answer text."""
    return bool(_NOTE.search(text))


def sentence_check(final_text: str, markers: Sequence[str]) -> tuple[int, int]:
    """(missing, repeated) numbered sentences of the model's answer in the final text."""
    counts = Counter(re.findall(r"Step \d+:", final_text))
    missing = sum(1 for m in markers if counts[m] == 0)
    repeated = sum(1 for m in markers if counts[m] > 1)
    return missing, repeated


def summarize(answers: Sequence[Measured]) -> dict[str, Any]:
    firsts = [a.first_text for a in answers if a.first_text is not None]
    finals = [a.final for a in answers if a.final is not None]
    calls = [a.calls for a in answers]
    texts = [a.text_calls for a in answers]
    return {
        "n": len(answers),
        "first_text_p50_s": _s(percentile(firsts, 0.5)),
        "first_text_p95_s": _s(percentile(firsts, 0.95)),
        "final_p50_s": _s(percentile(finals, 0.5)),
        "final_p95_s": _s(percentile(finals, 0.95)),
        "calls_median": median(calls),
        "calls_max": max(calls, default=0),
        "text_calls_median": median(texts),
        "text_calls_max": max(texts, default=0),
        "routes": dict(Counter(a.route for a in answers)),
        "messages_max": max((a.messages for a in answers), default=0),
        "unfinished": len(answers) - len(finals),
        "refused_calls": dict(Counter(code for a in answers for code in a.refused)),
        "missing_sentences": sum(a.missing for a in answers),
        "repeated_sentences": sum(a.repeated for a in answers),
        "answers": [asdict(a) for a in answers],
    }


def defects(row: dict[str, Any]) -> list[str]:
    """What went wrong in a run, in words ([] when nothing did)."""
    found = []
    for key, words in (
        ("unfinished", "answers never finished"),
        ("missing_sentences", "sentences lost"),
        ("repeated_sentences", "sentences shown twice"),
    ):
        if row[key]:
            found.append(f"{row[key]} {words}")
    if row["refused_calls"]:
        codes = ", ".join(f"{code} {n}" for code, n in sorted(row["refused_calls"].items()))
        found.append(f"calls refused: {codes}")
    return found


def _s(seconds: float) -> float:
    return round(seconds, 3)


HEADER = [
    "surface",
    "streamed",
    "n",
    "first text p50 / p95 s",
    "final p50 / p95 s",
    "calls / answer median (max)",
    "text calls median (max)",
    "route",
    "defects",
]


def report(rows: Sequence[dict[str, Any]]) -> str:
    """The side-by-side table: one row per surface and mode."""
    cells = [
        [
            r["surface"],
            "on" if r["stream"] else "off",
            r["n"],
            f"{r['first_text_p50_s']:.2f} / {r['first_text_p95_s']:.2f}",
            f"{r['final_p50_s']:.2f} / {r['final_p95_s']:.2f}",
            f"{r['calls_median']:g} ({r['calls_max']})",
            f"{r['text_calls_median']:g} ({r['text_calls_max']})",
            ", ".join(f"{k} {v}" for k, v in sorted(r["routes"].items())),
            "; ".join(defects(r)) or "none",
        ]
        for r in rows
    ]
    return table(HEADER, cells)
