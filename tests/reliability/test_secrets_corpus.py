"""The scrubber against a corpus of planted secrets (>100 providers, many file kinds) and look-alikes.

Aims (issue 12): at most 3% of planted secrets kept, at most 10% of look-alikes
redacted; line counts never change and the text around a secret survives.
`bench/secrets_eval.py` prints the same figures per provider and per context.
"""

from __future__ import annotations

from collections import Counter

import pytest

from bot.ingest.secrets import scrub
from tests.support.secret_corpus.contexts import Planted, expected, plant, secrets_in
from tests.support.secret_corpus.evaluate import Report, evaluate
from tests.support.secret_corpus.lookalikes import LOOKALIKES
from tests.support.secret_corpus.tokens import samples

KEPT_AIM = 0.03
LOOKALIKE_AIM = 0.10


@pytest.fixture(scope="module")
def report() -> Report:
    return evaluate()


def test_the_corpus_is_broad():
    planted = plant(samples())
    providers = {p.sample.provider for p in planted}
    per_sample = Counter((p.sample.provider, p.sample.kind) for p in planted)
    kinds = {p.path.rsplit(".", 1)[-1] if "." in p.path else p.path for p in planted}
    assert len(providers) >= 100
    assert min(per_sample.values()) >= 8  # every secret is planted in at least 8 contexts
    assert len(kinds) >= 8  # .py .sh .yaml .json .toml .md .ts .go Dockerfile ...
    assert len(LOOKALIKES) >= 50
    values = [s.value for s in samples()]
    assert len(set(values)) == len(values)  # each sample has its own seeded body


def test_at_most_3_percent_of_secrets_are_kept(report):
    kept = [o.planted for o in report.outcomes if o.kept]
    shown = [f"{p.sample.provider}/{p.sample.kind} in {p.context}" for p in kept[:20]]
    assert report.kept_rate <= KEPT_AIM, shown


def test_at_most_10_percent_of_lookalikes_are_redacted(report):
    assert report.lookalike_rate <= LOOKALIKE_AIM, report.lookalikes_redacted


def test_no_context_is_a_blind_spot(report):
    """The aim holds in each context, not only on average (the issue's shell exports leaked 100%)."""
    rates = {c: sum(o.kept for o in items) / len(items) for c, items in report.by_context.items()}
    assert max(rates.values()) <= 0.10, rates


def test_line_counts_never_change(report):
    assert all(o.lines_kept for o in report.outcomes)


def test_text_around_each_secret_survives(report):
    damaged = [o.planted for o in report.outcomes if not o.kept and not _surroundings_survive(o)]
    assert damaged == [], [f"{p.sample.provider}/{p.sample.kind} in {p.context}" for p in damaged]


def _surroundings_survive(outcome) -> bool:
    """Lines without a secret are untouched; on a secret's line, what precedes and follows it is."""
    planted: Planted = outcome.planted
    out = scrub(planted.text, planted.path).text.split("\n")
    want = expected(planted).split("\n")
    secrets = secrets_in(planted)
    for original, got, wanted in zip(planted.text.split("\n"), out, want, strict=True):
        if not any(s in original for s in secrets) and "\\n" not in original:
            if got != original:
                return False
            continue
        head, _, _ = wanted.partition("[REDACTED]")
        tail = wanted.rpartition("[REDACTED]")[2]
        if not (got.startswith(head) and got.endswith(tail)):
            return False
    return True


def test_the_measure_can_fail():
    """An identity scrubber keeps everything; one that blanks every line redacts every look-alike."""
    assert evaluate(lambda text, path: text).kept_rate == 1.0
    blank = evaluate(lambda text, path: "\n" * text.count("\n"))
    assert blank.kept_rate == 0.0 and blank.lookalike_rate == 1.0
