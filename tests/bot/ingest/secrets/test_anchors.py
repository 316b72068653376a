"""Rules tried only next to their triggers find what a full regex scan of each rule finds."""

from __future__ import annotations

import random

import pytest

from bot.ingest.secrets import TOKEN_RULES, RuleSet, TokenRule, scrub
from bot.ingest.secrets.rules import _accept

TRIGGERED = [r for r in TOKEN_RULES.rules if r.trigger and not r.alone]
GLUE = ["", " ", "x", ":", "/", "@", "\n", "_", "'", '"', "=", "-", ".", "%2B", "é"]


def reference(rule: TokenRule, text: str) -> list[tuple[int, int]]:
    """The pattern tried at every position in turn, resuming after each accepted match."""
    out = []
    at = 0
    while at < len(text):
        match = rule.compiled.match(text, at)
        hit = None if match is None else _accept(rule, text, match)
        if match is None or hit is None:
            at += 1
            continue
        out.append((hit.start, hit.end))
        at = match.end()
    return out


def scanned(rule: TokenRule, text: str) -> list[tuple[int, int]]:
    return [(h.start, h.end) for h in RuleSet([rule]).scan(text)]


def shape(rule: TokenRule, rnd: random.Random) -> str:
    """A string the rule matches, or nearly: built from its trigger and random token characters."""
    body = "".join(rnd.choices("aZ9_-.0f", k=rnd.randint(0, 180)))
    lead = "".join(rnd.choices("0123456789abcdefAB", k=rnd.randint(0, rule.back)))
    return lead + rule.trigger + body


@pytest.mark.parametrize("rule", TRIGGERED, ids=lambda r: r.kind)
def test_random_neighbours_match_a_full_scan(rule: TokenRule) -> None:
    rnd = random.Random(rule.kind)
    for _ in range(300):
        parts = [rnd.choice(GLUE) + shape(rule, rnd) for _ in range(rnd.randint(1, 3))]
        text = "".join(parts) + rnd.choice(GLUE)
        assert scanned(rule, text) == reference(rule, text), (rule.kind, text)


def test_overlapping_triggers_take_the_longest_rule() -> None:
    rnd = random.Random(1)
    body = "".join(rnd.choices("abcdefghijkLMNOPQRSTUVWXYZ0123456789_-", k=96))
    text = f"key sk-ant-api03-{body}AA and sk-proj-{body[:48]}"
    kinds = [h.kind for h in TOKEN_RULES.scan(text)]
    assert kinds == ["anthropic_key", "openai_project_key"]


def test_scrub_still_redacts_through_triggered_rules() -> None:
    stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    text = f'url = "postgres://admin:hunter22x@db.internal/x"\nkey = "{stripe}"\n'
    result = scrub(text)
    assert "hunter22x" not in result.text
    assert stripe not in result.text
    assert result.text.count("\n") == text.count("\n")
