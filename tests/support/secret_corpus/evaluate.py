"""Run the scrubber over the corpus: what was kept, what was damaged, what was over-redacted."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.ingest.secrets import scrub
from tests.support.secret_corpus.contexts import NEUTRAL, Planted, expected, plant, secrets_in
from tests.support.secret_corpus.lookalikes import LOOKALIKES
from tests.support.secret_corpus.tokens import samples


@dataclass(frozen=True, slots=True)
class Outcome:
    planted: Planted
    kept: bool  # a secret (or a piece of one) is still in the output
    exact: bool  # the output is the input with each secret replaced, nothing else touched
    lines_kept: bool


@dataclass
class Report:
    outcomes: list[Outcome]
    lookalikes_redacted: list[str]
    lookalikes_total: int
    by_provider: dict[str, list[Outcome]] = field(default_factory=dict)
    by_context: dict[str, list[Outcome]] = field(default_factory=dict)

    @property
    def kept_rate(self) -> float:
        return sum(o.kept for o in self.outcomes) / len(self.outcomes)

    @property
    def lookalike_rate(self) -> float:
        return len(self.lookalikes_redacted) / self.lookalikes_total


def evaluate(scrubber: Callable[[str, str], str] | None = None) -> Report:
    run = scrubber or (lambda text, path: scrub(text, path).text)
    outcomes = []
    for planted in plant(samples()):
        out = run(planted.text, planted.path)
        kept = any(secret in out for secret in secrets_in(planted))
        outcomes.append(
            Outcome(
                planted,
                kept=kept,
                exact=out == expected(planted),
                lines_kept=out.count("\n") == planted.text.count("\n"),
            )
        )
    redacted = [name for name, path, text in LOOKALIKES if run(text, path) != text]
    report = Report(outcomes, redacted, len(LOOKALIKES))
    by_provider: dict[str, list[Outcome]] = defaultdict(list)
    by_context: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_provider[outcome.planted.sample.provider].append(outcome)
        by_context[outcome.planted.context].append(outcome)
    report.by_provider = dict(by_provider)
    report.by_context = dict(by_context)
    return report


def unannounced_in_neutral_contexts(scrubber: Callable[[str, str], str] | None = None) -> float:
    """Kept share of prefix-less secrets (a Datadog key: 32 hex digits) where nothing names them.

    Not part of the aims: a bare 32-hex argument is indistinguishable from a
    content hash, so these are expected to be kept. Reported so it is seen.
    """
    run = scrubber or (lambda text, path: scrub(text, path).text)
    kept = total = 0
    for sample in samples():
        if sample.announced:
            continue
        for render in NEUTRAL.values():
            path, text = render(sample)
            total += 1
            kept += any(secret in run(text, path) for secret in sample.secrets)
    return kept / total


def table(groups: dict[str, list[Outcome]], title: str) -> str:
    rows = [f"{title:<28} {'planted':>7} {'kept':>5} {'kept%':>6} {'exact%':>7}"]
    ordered = sorted(
        groups.items(), key=lambda kv: (-sum(o.kept for o in kv[1]) / len(kv[1]), kv[0])
    )
    for name, items in ordered:
        kept = sum(o.kept for o in items)
        exact = sum(o.exact for o in items)
        rows.append(
            f"{name:<28} {len(items):>7} {kept:>5} {100 * kept / len(items):>5.1f}% {100 * exact / len(items):>6.1f}%"
        )
    return "\n".join(rows)
