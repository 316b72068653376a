"""Excerpts that start at a boundary, labels of one definition, floors, the model's sources."""

from __future__ import annotations

from bot.answer.excerpts import best_excerpt
from bot.answer.extractive import above_floor
from bot.answer.labels import one_definition
from bot.answer.model_sources import SOURCE_CHARS, for_model, window
from bot.models import Chunk, Hit
from bot.retrieval.common_words import is_common
from bot.retrieval.relevance import Concept, Coverage, not_covered_sentence
from bot.retrieval.retriever import Source
from bot.symbols.model import SymbolDef


def _source(text: str, start: int = 1, symbol: str = "", path: str = "a.py") -> Source:
    end = start + len(text.split("\n")) - 1
    return Source("r", path, "python", start, end, symbol, text, 1.0)


def _hit(path: str, start: int, end: int, relevance: float) -> Hit:
    chunk = Chunk("r", path, "python", start, end, "function", "", "", "x", "c")
    return Hit(chunk, 1.0, relevance)


def test_an_excerpt_never_starts_inside_a_docstring() -> None:
    lines = [
        "def charge(card, amount):",
        '    """Charge a card through the provider.',
        "",
        "    The provider retries a declined card once; the",
        "    second decline raises CardDeclined.",
        '    """',
        "    request = sign(card, amount)",
        *[f"    step_{i}()" for i in range(10)],
    ]
    excerpt = best_excerpt(_source("\n".join(lines), 40), {"declined": 5.0})
    assert excerpt.start_line == 40  # the def line above its docstring, not mid-sentence
    assert excerpt.text.split("\n")[0].startswith("def charge")


def test_an_excerpt_is_labelled_with_the_one_definition_its_lines_belong_to() -> None:
    block = _source("def a():\n    x()\n\ndef b():\n    y()\n    z()", 10, "a, b")
    excerpt = _source("def b():\n    y()\n    z()", 13)
    assert one_definition(block, excerpt) == "b"  # from the text alone
    defs = [SymbolDef("r", "a.py", "b", "K.b", "method", 13, 15)]
    assert one_definition(block, excerpt, defs) == "K.b"  # the symbol table knows better


def test_places_far_below_the_best_are_dropped_not_padded() -> None:
    sources = [_source("x", 1), _source("x", 10), _source("x", 20), _source("x", 30)]
    hits = [_hit("a.py", 1, 1, 0.9), _hit("a.py", 10, 10, 0.7), _hit("a.py", 20, 20, 0.2)]
    kept = above_floor(sources, hits)
    assert [s.start_line for s in kept] == [1, 10]  # 0.2 and unjudged are left out


def test_the_model_gets_a_window_of_a_long_block_and_a_bounded_prompt() -> None:
    text = "\n".join(["filler()"] * 100 + ["retry_charge()"] + ["filler()"] * 100)
    cut = window(_source(text, 1), {"retry_charge": 3.0}, lines=20)
    assert cut.start_line <= 101 <= cut.end_line and len(cut.text.split("\n")) == 20
    big = [_source("\n".join(["retry_charge()"] * 40), 1 + 100 * i) for i in range(20)]
    hits = [_hit("a.py", s.start_line, s.end_line, 0.8) for s in big]
    chosen = for_model(big, hits, {"retry_charge": 1.0})
    assert 1 < len(chosen) < len(big)
    assert sum(len(s.text) for s in chosen) <= SOURCE_CHARS
    assert [s.start_line for s in chosen] == sorted(s.start_line for s in chosen)  # order kept


def test_everyday_words_never_make_a_question_not_covered() -> None:
    assert is_common("pick") and is_common("figures") and is_common("decides")
    assert not is_common("blueprint") and not is_common("retry")
    # how a lookup is asked: "where is X defined, the one that routes?"
    assert is_common("defined") and is_common("one") and is_common("implementation")
    words = ("router", "pick", "handler")
    concepts = tuple(Concept(w, (w,), named=False, common=is_common(w)) for w in words)
    everyday_missing = Coverage(concepts, (1.0, 3.0, 1.0), (True, False, True))
    assert everyday_missing.covered and not_covered_sentence(everyday_missing) == ""
    domain_missing = Coverage(concepts, (3.0, 1.0, 1.0), (False, True, True))
    assert not domain_missing.covered and "router" in not_covered_sentence(domain_missing)
