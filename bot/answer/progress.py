"""What the bot is doing while an answer is prepared, in short sentences for a status line.

Adapters show them where the platform has a place for it (Slack's assistant
status, the terminal's status line). A status names the question's subject
and, once a model stage has run, how long it took, so a slow answer explains
itself. Showing a status must never stop an answer: a failing callback is
logged and ignored.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping

from bot.retrieval.query import QueryAnalysis

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

SUBJECT_CHARS = 40  # a status line is short; the subject is a hint, not the question
SUBJECT_TERMS = 3
_WORD = re.compile(r"[\w.-]+")
# Model stages worth naming, with the timing key they are measured under.
_STAGES = (("HyDE", "hyde"), ("pruning", "prune"))


def searching(analysis: QueryAnalysis) -> str:
    """The identifiers the question names ("searching apply_discount…"), else its first
    search words as the asker wrote them (the terms also hold stems and split names)."""
    names = analysis.symbols or analysis.paths
    if not names:
        terms = set(analysis.terms)
        names = tuple(w for w in _WORD.findall(analysis.text) if w.lower() in terms)
    subject = " ".join(list(dict.fromkeys(names))[:SUBJECT_TERMS])
    if len(subject) > SUBJECT_CHARS:
        subject = subject[: SUBJECT_CHARS - 1].rstrip() + "…"
    return f"searching {subject}…" if subject else "searching…"


def reading(sources: int, timings: Mapping[str, float]) -> str:
    """ "reading 6 sources… (HyDE 0.4 s)": what retrieval found, and HyDE's time if it ran."""
    noun = "source" if sources == 1 else "sources"
    return f"reading {sources} {noun}…{_took(timings, *_STAGES[:1])}"


def pruning(sources: int) -> str:
    return f"choosing among {sources} sources…"


def writing(sources: int, timings: Mapping[str, float]) -> str:
    """ "writing the answer from 4 sources… (HyDE 0.4 s, pruning 0.8 s)"."""
    noun = "source" if sources == 1 else "sources"
    return f"writing the answer from {sources} {noun}…{_took(timings, *_STAGES)}"


def _took(timings: Mapping[str, float], *stages: tuple[str, str]) -> str:
    parts = [f"{label} {timings[key]:.1f} s" for label, key in stages if key in timings]
    return f" ({', '.join(parts)})" if parts else ""


class Reporter:
    """Calls the adapter's callback (if any), never letting it fail the answer."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress

    def __call__(self, status: str) -> None:
        if self._progress is None:
            return
        try:
            self._progress(status)
        except Exception as exc:  # noqa: BLE001 -- a status line is never worth an answer
            log.warning("could not show the status %r: %s", status, type(exc).__name__)
