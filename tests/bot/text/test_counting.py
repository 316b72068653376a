from __future__ import annotations

import math

import pytest

from bot.text.counting import count_tokens, truncate_to_tokens

SAMPLES = [
    "",
    "hello world, this is plain English prose about billing.",
    "def register_hook(self, name: str) -> None:\n        self._hooks[name] = []\n",
    "foo(bar, baz)",
    "x = 1\n" * 50,
    "const total = items.reduce((a, b) => a + b.price * 1.07, 0);",
    "SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0IGRhdGEu" * 5,
    "データベース接続を再試行する",
    "emoji 🎉🎉🎉 and café",
    "0123456789" * 20,
    "\t\t\n\n   \n",
    "{{{{}}}}[[[]]]((()))",
]


def test_empty_text_has_no_tokens() -> None:
    assert count_tokens("") == 0


@pytest.mark.parametrize("text", SAMPLES)
def test_never_below_a_quarter_of_the_characters(text: str) -> None:
    # The fake OpenAI server (and the usual rule for prose) counts ceil(chars / 4).
    assert count_tokens(text) >= math.ceil(len(text) / 4)


def test_punctuation_heavy_code_counts_more_than_chars_over_four() -> None:
    # cl100k splits `foo(bar, baz)` into 6 tokens; chars/4 would say 4.
    assert count_tokens("foo(bar, baz)") >= 6


def test_non_ascii_counts_per_byte_pair() -> None:
    text = "データベース"  # 6 characters, 18 UTF-8 bytes
    assert count_tokens(text) == 9


def test_numbers_split_in_threes() -> None:
    assert count_tokens("123456789012") == 4


@pytest.mark.parametrize("text", SAMPLES)
def test_prefix_counts_never_exceed_the_whole(text: str) -> None:
    counts = [count_tokens(text[:i]) for i in range(len(text) + 1)]
    assert counts == sorted(counts)


def test_truncate_keeps_short_text_whole() -> None:
    assert truncate_to_tokens("short text", 100) == "short text"


def test_truncate_to_zero_is_empty() -> None:
    assert truncate_to_tokens("anything", 0) == ""


@pytest.mark.parametrize("limit", [1, 5, 17, 100, 1000])
@pytest.mark.parametrize("text", SAMPLES[1:])
def test_truncate_fits_and_is_a_prefix(text: str, limit: int) -> None:
    cut = truncate_to_tokens(text, limit)
    assert text.startswith(cut)
    assert count_tokens(cut) <= limit


def test_truncate_is_maximal_when_not_cutting_at_a_line() -> None:
    text = "word " * 1000  # no newlines, so no backing off to a line break
    cut = truncate_to_tokens(text, 50)
    assert count_tokens(cut) <= 50
    assert count_tokens(text[: len(cut) + 1]) > 50


def test_truncate_prefers_a_line_break_near_the_cut() -> None:
    text = "".join(f"line_{i} = compute({i})\n" for i in range(500))
    cut = truncate_to_tokens(text, 300)
    assert cut.endswith("\n")
    assert count_tokens(cut) <= 300
    assert count_tokens(cut) > 250  # backing off lost little


def test_truncate_handles_huge_text_quickly() -> None:
    text = "a" * 5_000_000
    cut = truncate_to_tokens(text, 8192)
    assert count_tokens(cut) <= 8192
    assert len(cut) >= 8192 * 4 - 4
