"""The round-three corpus (bench/secrets_corpus) and its harness, and the aims of issue 28.

The harness (`bench/secrets_index_eval.py`) indexes the corpus and searches every
byte of the data directory; here the same corpus is scrubbed directly (fast), so a
change that lets secrets through or redacts look-alikes fails the suite, and the
harness's scoring is shown able to fail both ways.
"""

from __future__ import annotations

from collections import Counter

import pytest

from bench.secrets_corpus.plant import corpus, lookalikes
from bench.secrets_corpus.plant_real import all_lookalikes, all_values
from bench.secrets_index_eval import score
from bot.ingest.secrets import scrub

KEPT_AIM = 0.03
LOOKALIKE_AIM = 0.05


def test_the_corpus_is_as_broad_as_the_issue_asks():
    planted = corpus()
    assert len(planted) >= 800
    assert len({p.fmt.provider for p in planted}) >= 300
    assert len(lookalikes()) >= 150
    assert len({p.value for p in planted}) == len(planted)  # each value drawn fresh
    classes = Counter(p.cls for p in planted)
    assert {"code", "yaml", "toml", "ini", "json", "properties", "dockerfile", "shell"} <= set(
        classes
    )
    assert {"cli", "url", "prose", "example", "env"} <= set(classes)


@pytest.fixture(scope="module")
def scrubbed() -> dict[str, str]:
    return {p.id: scrub(p.text, p.path).text for p in [*all_values(), *all_lookalikes()]}


def test_at_most_3_percent_of_values_survive_scrubbing(scrubbed):
    planted = corpus()
    kept = [p for p in planted if any(s in scrubbed[p.id] for s in p.secrets)]
    shown = [f"{p.fmt.provider}/{p.fmt.kind} in {p.context}" for p in kept[:20]]
    assert len(kept) / len(planted) <= KEPT_AIM, shown


def test_at_most_5_percent_of_lookalikes_are_redacted(scrubbed):
    looks = lookalikes()
    redacted = [x for x in looks if scrubbed[x.id] != x.text]
    assert len(redacted) / len(looks) <= LOOKALIKE_AIM, [x.probe for x in redacted]


def test_line_counts_never_change(scrubbed):
    for item in [*all_values(), *all_lookalikes()]:
        assert scrubbed[item.id].count("\n") == item.text.count("\n"), item.id


def test_the_harness_scoring_can_fail_both_ways():
    """Everything in the data directory: every value kept, no look-alike redacted, no file
    lost. Nothing there: no value kept, every look-alike redacted, every file lost."""
    everything = "\n".join(x.text for x in [*all_values(), *all_lookalikes()]).encode()
    full = score("all", 0.0, "", everything)
    assert len(full.kept) == len(all_values()) and not full.redacted and not full.lost
    empty = score("none", 0.0, "", b"")
    assert not empty.kept and len(empty.redacted) == len(all_lookalikes())
    assert len(empty.lost) == len(all_values())


def test_a_value_cut_into_lower_cased_pieces_still_counts_as_kept():
    """The index's term counts may hold a secret lower-cased and split at punctuation."""
    planted = next(p for p in corpus() if p.fmt.provider == "github")
    body = planted.secrets[0].split("_", 1)[1].lower()
    assert planted.id in score("terms", 0.0, "", body.encode()).kept
