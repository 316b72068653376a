"""History questions in the phrasings people use; code questions stay code questions."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.retrieval.history_intent import history_intent

HISTORY = [
    ("why was shell completion rewritten?", "why"),
    ("Why did we switch to ruff?", "why"),
    ("why is the retry loop like this?", "why"),
    ("What was the reason for the removal of Python 2 support?", "why"),
    ("why does Rack::Head behave like this?", "why"),
    ("why does the parser work the way it does?", "why"),
    ("Why does black no longer support Python 3.9?", "why"),
    ("when did the session interface change?", "when"),
    ("when was `Blueprint.register` added", "when"),
    ("since when does flask support async views?", "when"),
    ("what changed in click since 8.1.0?", "since"),
    ("what changed since last week?", "since"),
    ("show me recent changes to the router", "since"),
    ("list commits from the past 3 days", "since"),
    ("who last changed the Choice parameter type, and when?", "who"),
    ("who knows the scheduler code?", "who"),
    ("who wrote bot/ingest/git.py", "who"),
    ("which commit introduced the regression in parse_args?", "which"),
    ("which PR added type hints to attrs.define?", "which"),
    ("history of src/flask/app.py", "log"),
    # the reason for a past change or a design, asked without naming the change
    ("why is there a separate sync module?", "why"),
    ("why did the sampler panic when the rate was zero?", "why"),
    ("why was reading the log level racy?", "why"),
    ("why doesn't zap.Object panic any more on nil values?", "why"),
    ("why does the router accept trailing slashes now?", "why"),
    ("why can levels be parsed from upper-case names?", "why"),
    ("when did the client get a retry option?", "when"),
    ("when could you first pass a context to the hooks?", "when"),
    ("when was a helper to parse a duration from a plain string of digits added?", "when"),
]
CODE = [
    "where is the retry loop?",
    "how does the scheduler decide when to run?",
    "when is teardown_request called?",
    "who calls make_response?",
    "why does fixture teardown raise an error?",
    "why would this fail on windows?",
    "why does this not work?",
    "why does the decorator work?",
    "what changes the value of app.debug?",
    "what does Choice do?",
    "why did my test fail on windows?",
    "why does the loader use an import path parameter?",
    "why does the formatter raise on nil values now?",
    "why does the cache keep stale entries?",
    "when could this callback be called?",
]


@pytest.mark.parametrize(("question", "kind"), HISTORY)
def test_history_phrasings_are_recognised(question: str, kind: str) -> None:
    intent = history_intent(question)
    assert intent is not None and intent.kind == kind


@pytest.mark.parametrize("question", CODE)
def test_code_questions_are_not_taken_for_history(question: str) -> None:
    assert history_intent(question) is None


def test_starts_are_read_from_tags_and_dates() -> None:
    now = datetime(2026, 1, 15, tzinfo=UTC)
    assert history_intent("what changed since v2.0.1?", now).since_tag == "v2.0.1"  # type: ignore[union-attr]
    week = history_intent("what changed in the last week?", now)
    assert week is not None and week.since_time == int(datetime(2026, 1, 8, tzinfo=UTC).timestamp())
    assert history_intent("who last changed Choice?", now).last  # type: ignore[union-attr]


def test_no_question_of_the_bench_sets_flips() -> None:
    """Every question the retrieval benchmarks ask stays a code question."""
    cases = sorted((Path(__file__).parents[3] / "bench" / "cases").glob("*.jsonl"))
    rows = [
        json.loads(line)
        for f in cases
        if not f.name.startswith("history_")  # the history questions, which must flip
        for line in f.read_text().splitlines()
        if line.strip()
    ]
    questions = [row["question"] for row in rows if "question" in row]
    assert len(questions) >= 80
    assert [q for q in questions if history_intent(q)] == []
