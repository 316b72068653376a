"""Invariants every chunking must keep, over the fixtures, the stdlib and random text.

`assert_well_formed` is shared with the other chunking tests.
"""

from __future__ import annotations

import logging
import random
import sysconfig
from pathlib import Path

import pytest

from bot.code.chunking import DEFAULT_BUDGET, ChunkBudget, chunk_file
from bot.code.languages import SYNTAX_LANGUAGES, language_for
from tests.support.chunks import assert_well_formed
from tests.support.paths import POLYGLOT

FIXTURES = POLYGLOT
TINY = ChunkBudget(max_lines=6, max_chars=240, min_chars=60, window_lines=4, window_overlap=1)
ONE_LINE = ChunkBudget(max_lines=1, max_chars=1, min_chars=0, window_lines=1, window_overlap=0)
BUDGETS = [DEFAULT_BUDGET, TINY, ONE_LINE]
LANGUAGES = sorted(SYNTAX_LANGUAGES | {"markdown", "text"})


@pytest.fixture
def no_fallback(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Fails the test if the chunker had to fall back to windows after an internal error."""
    caplog.set_level(logging.WARNING, logger="bot.code.chunking")
    return caplog


def _no_warnings(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.name.startswith("bot.code.chunking")]


@pytest.mark.parametrize("budget", BUDGETS, ids=["default", "tiny", "one-line"])
@pytest.mark.parametrize("path", sorted(FIXTURES.iterdir()), ids=lambda p: p.name)
def test_fixture_chunks_are_well_formed(
    path: Path, budget: ChunkBudget, no_fallback: pytest.LogCaptureFixture
) -> None:
    text = path.read_text(encoding="utf-8")
    language = language_for(path.name)
    assert language is not None
    spans = chunk_file(path.name, text, language, budget=budget)
    assert_well_formed(text, spans, budget)
    _no_warnings(no_fallback)


def _stdlib_sample(step: int = 12) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    return files[::step]


@pytest.mark.parametrize("budget", [DEFAULT_BUDGET, TINY], ids=["default", "tiny"])
def test_stdlib_sample_is_well_formed(
    budget: ChunkBudget, no_fallback: pytest.LogCaptureFixture
) -> None:
    files = _stdlib_sample()
    if len(files) < 50:
        pytest.skip("the Python standard library sources are not installed here")
    kinds: set[str] = set()
    for path in files:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        spans = chunk_file(str(path), text, "python", budget=budget)
        assert_well_formed(text, spans, budget)
        kinds.update(s.kind for s in spans)
    assert {"function", "method", "class", "block"} <= kinds
    _no_warnings(no_fallback)


_FRAGMENTS = [
    "def f(x):\n",
    "    return x\n",
    "class A:\n",
    "  @dec\n",
    "}\n",
    "{\n",
    "fn main() {",
    "impl X {",
    "func (r *R) M() {",
    "#include <x.h>\n",
    "/* open comment",
    "*/",
    "'unclosed",
    '"',
    "`",
    "<?php ",
    "end\n",
    "module M\n",
    "namespace N {",
    "template <class T>",
    "=> {",
    "# Title\n",
    "```\n",
    "~~~\n",
    "\r\n",
    "\r",
    "\f",
    "\x0b",
    "\u2028",
    "\u2029",
    "\x85",
    "\x1c",
    "\t",
    "\x00",
    "\ufeff",
    "é",
    "日本",
    "\U0001f600",
    "\udcff",
    "    ",
    "\n\n",
    "x" * 300,
    ";",
    "(",
    ")",
    "[",
]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(0, 80)))


@pytest.mark.parametrize("language", LANGUAGES)
def test_random_text_never_breaks_the_chunker(
    language: str, no_fallback: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(f"chunk-{language}")
    for round_ in range(60):
        text = _random_text(rng)
        budget = BUDGETS[round_ % len(BUDGETS)]
        spans = chunk_file(f"fuzz.{language}", text, language, budget=budget)
        assert_well_formed(text, spans, budget)
    _no_warnings(no_fallback)


@pytest.mark.parametrize("language", LANGUAGES)
def test_shuffled_fixture_lines_stay_well_formed(
    language: str, no_fallback: pytest.LogCaptureFixture
) -> None:
    """Real code cut and reordered: plenty of syntax errors, still sane chunks."""
    rng = random.Random(language)
    lines = [
        line
        for path in sorted(FIXTURES.iterdir())
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
    ]
    for _ in range(8):
        start = rng.randrange(len(lines))
        piece = lines[start : start + rng.randint(1, 120)]
        if rng.random() < 0.5:
            rng.shuffle(piece)
        text = "".join(piece)
        spans = chunk_file("shuffled", text, language, budget=TINY)
        assert_well_formed(text, spans, TINY)
    _no_warnings(no_fallback)
