"""Detectors tried only near their triggers find exactly what a full regex scan finds."""

from __future__ import annotations

import random
import re

import pytest

from bot.ingest.secrets import DETECTORS, Detector, scrub

ANCHORED = [d for d in DETECTORS if d.anchor is not None]
PIECES = [
    "http", "https", "postgres+psycopg", "a", "ab", "://", ":", "@", "user", "p4ss", "host.io",
    "/", " ", "\n", "'", '"', "x" * 25, "SK", "0123456789abcdef", "ABCDEF", "sk", "rk", "pk",
    "_live_", "_test_", "_", "Zz9", "-", ".", "+", "é", "TASK", "0" * 32, "DISK", "sk_live_",
]  # fmt: skip


def marked(match: re.Match[str]) -> str:
    return f"<{match.start()}:{match.group(0)}>"


def check(detector: Detector, text: str) -> None:
    assert detector.sub(marked, text) == detector.pattern.sub(marked, text), (detector.kind, text)


@pytest.mark.parametrize("detector", ANCHORED, ids=lambda d: d.kind)
def test_random_text_matches_a_full_scan(detector: Detector) -> None:
    rnd = random.Random(detector.kind)
    for _ in range(4000):
        check(detector, "".join(rnd.choices(PIECES, k=rnd.randint(0, 30))))


def near_miss(rnd: random.Random) -> str:
    """Secrets and almost-secrets of each anchored kind, glued to random neighbours."""
    word = "".join(rnd.choices("abZ9+.-_", k=rnd.randint(1, 24)))
    hexes = "".join(rnd.choices("0123456789abcdefABCDEFg", k=rnd.randint(28, 36)))
    key = "".join(rnd.choices("aZ9_", k=rnd.randint(12, 104)))
    return rnd.choice(
        [
            f"{word}://{rnd.choice(['u', 'user', ''])}:{rnd.choice(['pw', 'p4ss', 's3cret'])}@h",
            f"{rnd.choice(['sk', 'rk', 'pk', 'xk'])}_{rnd.choice(['live', 'test'])}_{key}",
            f"SK{hexes}",
        ]
    )


@pytest.mark.parametrize("detector", ANCHORED, ids=lambda d: d.kind)
def test_secret_shapes_match_a_full_scan(detector: Detector) -> None:
    rnd = random.Random(detector.kind + "shapes")
    for _ in range(4000):
        glue = rnd.choices(["", " ", "x", ":", "/", "@", "\n", "_", "'"], k=4)
        check(detector, glue[0] + near_miss(rnd) + glue[1] + near_miss(rnd) + glue[2])


@pytest.mark.parametrize("detector", ANCHORED, ids=lambda d: d.kind)
def test_crafted_secrets_match_a_full_scan(detector: Detector) -> None:
    for text in (
        "postgres://admin:hunter22@db.internal/x and mysql://u:pw123@h",
        "https://a:b@c://d:eee@f",  # a second scheme inside the first match
        "xhttp://u:secret@h  h://u:secret@h",  # no word boundary, then a scheme too short
        "sk_live_" + "a" * 20 + " rk_test_" + "b" * 99 + "c" + " xsk_live_" + "d" * 20,
        "SK" + "0" * 32 + " SK" + "f" * 31 + " TSK" + "a" * 32 + " SK" + "1" * 33,
        "SKSK" + "0" * 32,
        "ab://u:pw1@h " + "a" * 21 + "://u:pw1@h " + "a" * 22 + "://u:pw1@h",
    ):
        check(detector, text)


def test_scrub_still_redacts_through_anchored_detectors() -> None:
    text = 'url = "postgres://admin:hunter22@db.internal/x"\nkey = "sk_live_' + "a" * 24 + '"\n'
    result = scrub(text)
    assert "hunter22" not in result.text
    assert "sk_live_aaaa" not in result.text
    assert result.text.count("\n") == text.count("\n")
