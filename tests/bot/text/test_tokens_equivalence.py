"""The fast tokenizer gives exactly what the plain one gives, on random and real text.

`reference_*` below is the tokenizer as first written (one regex pass over the
text, each word split and stemmed on its own); `bot.text.tokens` must match it
token for token, in order, for any input: stored term counts depend on it.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from itertools import chain

import pytest

from bot.text import tokens
from bot.text.tokens import (
    STOPWORDS,
    code_tokens,
    iter_tokens,
    path_tokens,
    query_terms,
    stem,
    token_counts,
    tokens_in,
)
from tests.support.paths import ROOT

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def reference_identifier(ident: str) -> list[str]:
    whole = ident.lower().strip("_")
    if not whole or len(whole) > 64:
        return []
    parts = [p.lower() for seg in ident.split("_") if seg for p in _CAMEL.findall(seg)]
    out = [whole] if len(whole) > 1 else []
    if len(parts) > 1 or (parts and parts[0] != whole):
        out.extend(stem(p) for p in parts if len(p) > 1)
    elif len(whole) > 1 and stem(whole) != whole:
        out.append(stem(whole))
    return out


def reference_word(word: str) -> list[str]:
    if word[0].isdigit():
        return [word] if 1 < len(word) <= 8 else []
    return reference_identifier(word)


def reference_tokens(text: str) -> list[str]:
    words = list(chain.from_iterable(map(reference_word, _WORD.findall(text))))
    return words + tokens.compounds(text)  # compounds are tested in tests/test_tokens.py


def reference_query_terms(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        if word.lower() in STOPWORDS:
            continue
        for tok in reference_tokens(word):
            if tok not in STOPWORDS:
                seen.setdefault(tok, None)
    for tok in tokens.compounds(text):
        seen.setdefault(tok, None)
    return list(seen)


# Pieces that meet every branch: camelCase, snake_case, digits glued to words,
# non-ASCII digits (which `\d` matches), letters outside ASCII, punctuation.
PIECES = [
    "registerHook", "HTTPServerError", "__init__", "_private", "x", "a1", "2to3", "12ab",
    "123456789", "007", "v2_beta", "ALL_CAPS", "caching", "retries", "é", "naïve", "straße",
    "ſpecial", "\u212aelvin", "٣٤", "x٣", "\u00b2", "\t", "\n", " ", ".", "->", "::", "'", '"',
    "-", "/", "\\", "$", "#", "@", "ünïcode_name", "日本語", "a" * 70, "b" * 64, "Ab" * 40,
]  # fmt: skip


def random_text(rnd: random.Random) -> str:
    parts = rnd.choices(PIECES, k=rnd.randint(0, 40))
    glue = rnd.choice(["", " ", "_", ".", "\n"])
    return glue.join(parts)


def check(text: str) -> None:
    expected = reference_tokens(text)
    assert code_tokens(text) == expected, text
    assert list(iter_tokens(text)) == expected, text
    assert list(token_counts(text).items()) == list(Counter(expected).items()), text
    assert query_terms(text) == reference_query_terms(text), text


def test_random_text_tokenises_as_the_reference() -> None:
    rnd = random.Random(20240613)
    for _ in range(3000):
        check(random_text(rnd))


def test_random_characters_tokenise_as_the_reference() -> None:
    rnd = random.Random(7)
    alphabet = "aB_9 .\n\t-é٣K" + "".join(map(chr, range(32, 127)))
    for _ in range(2000):
        check("".join(rnd.choices(alphabet, k=rnd.randint(0, 60))))


def test_paths_tokenise_as_the_reference() -> None:
    for path in ("src/flask/json/provider.py", "a-b/c.d/E_f.txt", "x/2to3/ünï.py", ""):
        flat = path.replace("/", " ").replace(".", " ").replace("-", " ")
        assert path_tokens(path) == reference_tokens(flat)


@pytest.mark.parametrize("folder", ["bot", "tests/index"])
def test_this_repository_tokenises_as_the_reference(folder: str) -> None:
    for path in sorted((ROOT / folder).rglob("*.py"))[:120]:
        check(path.read_text(encoding="utf-8"))


def check_tokens_in(text: str, extra: tuple[str, ...] = ()) -> None:
    """`tokens_in` finds exactly the wanted tokens the full tokenizer gives, no more."""
    present = set(reference_tokens(text))
    # Tokens of the text, near misses (prefixes, "-ies" stems, compounds) and strangers.
    wanted = {*present, *extra, *(t[:-1] for t in present if len(t) > 2), "retry", "zzz"}
    assert tokens_in(text, wanted) == present & wanted, text


def test_tokens_in_agrees_with_the_tokenizer_on_random_text() -> None:
    rnd = random.Random(11)
    for _ in range(2000):
        check_tokens_in(random_text(rnd), ("registerhook", "hook", "caching", "cach"))


def test_tokens_in_finds_stems_compounds_and_nothing_inside_other_words() -> None:
    text = "it retried twice; see --setup-show and RETRIES_MAX in concatenate()"
    assert tokens_in(text, ["retry", "setup_show", "max", "cat", "concatenat", "show"]) == {
        "retry",
        "setup_show",
        "max",
        "concatenat",
        "show",
    }
    assert tokens_in("x_setup-show", ["setup_show"]) == set()  # no compound after "_"
    # Non-ASCII text ("İ" lower-cases to two characters): the full tokenizer decides.
    assert tokens_in("İstanbul retries", ["retry", "stanbul", "istanbul"]) == {"retry", "stanbul"}


@pytest.mark.parametrize("folder", ["bot", "tests/bot/answer"])
def test_tokens_in_agrees_with_the_tokenizer_on_this_repository(folder: str) -> None:
    for path in sorted((ROOT / folder).rglob("*.py"))[:60]:
        text = path.read_text(encoding="utf-8")
        for start in range(0, len(text), 1500):
            check_tokens_in(text[start : start + 1500], ("setup_show", "dry_run"))


def test_a_full_cache_starts_over_and_still_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    small = tokens._Memo(tokens._run_tokens, 3)
    monkeypatch.setattr(tokens, "_tokens_of", small.__getitem__)
    text = "alpha beta gamma delta alphaBeta 2to3 alpha"
    assert code_tokens(text) == reference_tokens(text)
    assert len(small) <= 3
