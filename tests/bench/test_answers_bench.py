"""bench/answers.py scores what it is given: cited ranges, not-found openings, prompt sources."""

from __future__ import annotations

from bench.answers import Gold, Item, extractive_verdict, prompt_verdict, summary
from bot.models import Answer, Citation

ITEM = Item("q1", "o/r", "c" * 40, "how", "how?", (Gold("a.py", 10, 20),))


def _answer(text: str, *spans: tuple[str, int, int]) -> Answer:
    cites = tuple(Citation("r", p, s, e, "") for p, s, e in spans)
    return Answer(text, cites, ())


def test_first_and_any_cited_range_and_not_found() -> None:
    v = extractive_verdict(ITEM, _answer("x", ("b.py", 1, 5), ("a.py", 18, 30)))
    assert v == {"first_in_gold": False, "any_in_gold": True, "not_found": False}
    v = extractive_verdict(ITEM, _answer("The indexed code does not seem to mention X; …"))
    assert v["not_found"] and not v["any_in_gold"]


def test_the_gold_lines_source_number_and_the_prompt_size() -> None:
    user = (
        '<source-ab12 n="1" at="r: b.py:L1-L9 (f)">\nx\n</source-ab12>\n'
        '<source-ab12 n="2" at="r: a.py:L15-L40 (g)">\ny\n</source-ab12>\nQuestion: how?'
    )
    body = {"messages": [{"role": "system", "content": "rules"}, {"role": "user", "content": user}]}
    v = prompt_verdict(ITEM, body)
    assert v == {"source": 2, "in_prompt": True, "chars": len("rules") + 1 + len(user)}
    facts = "Facts from codecite's symbol table:\n- part `x` at a.py:L1-L99"
    named = prompt_verdict(ITEM, {"messages": [{"content": facts}]})
    assert named["source"] == 0 and named["in_prompt"]  # named in the facts block only


def test_summary_counts_per_kind() -> None:
    rows = [
        {"kind": "how", "first_in_gold": True, "any_in_gold": True, "not_found": False,
         "source": 1, "in_prompt": True, "chars": 100},
        {"kind": "unanswerable", "first_in_gold": False, "any_in_gold": False,
         "not_found": True, "source": 0, "in_prompt": False, "chars": 50},
    ]  # fmt: skip
    how, unanswerable, total = summary(rows)
    assert how["first_in_gold"] == "1/1" and how["gold_in_source_1_2"] == "1/1"
    assert unanswerable["not_found_handled"] == "1/1" and total["false_not_found"] == 0
    assert total["median_prompt_chars"] == 75
