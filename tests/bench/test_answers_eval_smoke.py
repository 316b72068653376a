"""The answer evaluation end to end on small repositories, and its scoring rules by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import answers_eval
from bench.answer_cases import AnswerCase, Span, load_answer_cases
from bench.answer_scoring import Reply, Scored, is_not_found, score, summary_row
from bench.cases import CaseError
from bot.answer.extractive import NO_MODEL, NOTHING
from bot.answer.prompts import NOT_ANSWERED
from tests.bench.clones import one_commit_clone

PAYMENT = '''"""Card payments."""


def charge_card(gateway, card, amount, attempts=3):
    """Charge a card, retrying a declined charge a few times."""
    for _ in range(attempts):
        result = gateway.charge(card, amount)
        if result.ok:
            return result
    raise RuntimeError("charge declined")
'''
CHECKOUT = '''"""Checkout."""

from shop.payment import charge_card


def checkout(cart, gateway, card):
    """Charge the cart's total to the card."""
    return charge_card(gateway, card, cart.total())
'''
WEATHER = '''"""Forecasts."""


def hourly_forecast(station, hours=24):
    """Predict temperature and rainfall at a station for the next hours."""
    readings = station.barometer_readings()
    return [extrapolate(readings, hour) for hour in range(hours)]


def extrapolate(readings, hour):
    return readings[-1] + hour
'''

G = Span("a.py", 10, 20)  # gold
D = Span("b.py", 1, 5)  # decoy


def _case(kind: str = "definition", **kw: object) -> AnswerCase:
    fields: dict[str, object] = {
        "id": "c",
        "repo": "acme/x",
        "commit": "0" * 40,
        "kind": kind,
        "question": "where is f?",
        "gold": (G,),
        "decoys": (D,),
    }
    fields.update(kw)
    return AnswerCase(**fields)  # type: ignore[arg-type]


def _reply(text: str, *cites: Span, mode: str = "extractive") -> Reply:
    return Reply(text, mode, tuple(cites))


# -- scoring rules, hand-computed --------------------------------------------------------------


def test_a_definition_cited_first_is_right_and_not_wrong() -> None:
    v = score(
        _case(), _reply("`f` is defined in **a.py:L12-L14** (function `f`).", Span("a.py", 12, 14))
    )
    assert (v.first_in_gold, v.right_anywhere, v.covered) == (True, True, 1.0)
    assert not (v.not_found or v.false_not_found or v.confidently_wrong or v.cites_decoy)


def test_overlap_needs_the_same_path_and_a_shared_line() -> None:
    assert Span("a.py", 20, 25).overlaps(G) and Span("a.py", 1, 10).overlaps(G)
    assert not Span("a.py", 21, 30).overlaps(G) and not Span("a.py", 1, 9).overlaps(G)
    assert not Span("c/a.py", 10, 20).overlaps(G)
    v = score(_case(), _reply(NO_MODEL, Span("a.py", 21, 30), Span("a.py", 5, 10)))
    assert (v.first_in_gold, v.right_anywhere) == (False, True)


def test_a_decoy_cited_first_is_confidently_wrong_even_in_a_plain_listing() -> None:
    v = score(_case(), _reply(NO_MODEL, Span("b.py", 2, 3), Span("a.py", 15, 16)))
    assert (v.first_in_gold, v.right_anywhere, v.confidently_wrong, v.cites_decoy) == (
        False,
        True,
        True,
        True,
    )


def test_an_asserted_definition_outside_gold_is_wrong_a_plain_listing_is_not() -> None:
    asserted = score(_case(), _reply("`f` is defined in **c.py:L1-L2**.", Span("c.py", 1, 2)))
    listing = score(_case(), _reply(NO_MODEL, Span("c.py", 1, 2)))
    alias = score(_case(), _reply("`F` is an alias of `g` (**c.py:L1-L2**).", Span("c.py", 1, 2)))
    assert asserted.confidently_wrong and alias.confidently_wrong
    assert not listing.confidently_wrong and not listing.cites_decoy


def test_hedging_is_forgiven_only_when_a_right_candidate_is_among_them() -> None:
    text = "`f` has 2 definitions:\n• **b.py:L1-L5** function `f`\n• **x:L1** function `f`"
    with_right = score(_case(), _reply(text, Span("b.py", 1, 5), Span("a.py", 10, 20)))
    wrong_only = score(_case(), _reply(text, Span("b.py", 1, 5), Span("c.py", 1, 2)))
    text = "It is defined in one of these; I can't tell which: **c.py:L1**, **a.py:L11**."
    unsure = score(_case(), _reply(text, Span("c.py", 1, 1), G))
    assert not with_right.confidently_wrong and wrong_only.confidently_wrong
    assert not unsure.confidently_wrong


def test_a_not_found_lead_over_right_citations_is_a_false_not_found_not_a_wrong_one() -> None:
    text = f"I found no definition of that name in the repositories available here. {NO_MODEL}"
    v = score(_case(), _reply(text, Span("a.py", 10, 11)))
    assert (v.first_in_gold, v.not_found, v.false_not_found, v.confidently_wrong) == (
        True,
        True,
        True,
        False,
    )
    empty = score(_case(kind="how", decoys=()), _reply(NOT_ANSWERED, mode="empty"))
    assert empty.not_found and empty.false_not_found and not empty.right_anywhere


def test_an_answer_without_citations_is_a_false_not_found() -> None:
    v = score(_case(kind="how", decoys=()), _reply("It retries three times."))
    assert v.false_not_found and not v.not_found


def test_not_found_is_read_from_the_opening_sentence_in_todays_and_other_words() -> None:
    found = (
        "The indexed code does not seem to mention Kafka; the nearest places are:",
        NOT_ANSWERED,
        NOTHING,
        "The indexed code has no function, class or method named `x` (it may be a variable).",
        "**The indexed code doesn't cover rate limits.** Nearest:",
        "I couldn't find anything about Kafka.",
        "I couldn\u2019t find anything about Kafka.",
        "I could find no definition of `x`.",
        "Nothing in the indexed code matches this.",
    )
    not_found = (
        NO_MODEL,
        "`x` is defined in **a.py:L1-L2**. I found no other definition.",
        "No definition is needed: `x` is created for each HTTP method at **a.py:L3**.",
        "Called from 3 places in 2 files:",
    )
    assert all(is_not_found(_reply(t)) for t in found)
    assert not any(is_not_found(_reply(t)) for t in not_found)
    assert is_not_found(_reply("anything", mode="empty"))


def test_callers_skip_the_definition_asked_about_but_not_calls_inside_it() -> None:
    target = Span("a.py", 10, 40)
    calls = (Span("b.py", 5, 5), Span("c.py", 7, 7), Span("a.py", 15, 15))
    case = _case(kind="callers", gold=calls, decoys=(Span("d.py", 3, 3),), target=(target,))
    v = score(case, _reply("", Span("a.py", 8, 40), Span("b.py", 5, 5), Span("d.py", 3, 3)))
    assert (v.first_in_gold, v.right_anywhere, v.covered, v.cites_decoy) == (
        True,
        True,
        0.3333,
        True,
    )
    inside = score(case, _reply("", Span("a.py", 15, 15)))
    assert inside.first_in_gold and inside.covered == 0.3333
    only_definition = score(case, _reply("", Span("a.py", 10, 40)))
    assert not only_definition.right_anywhere and not only_definition.false_not_found


def test_unanswerable_questions_are_handled_by_saying_so() -> None:
    case = _case(kind="unanswerable", gold=(), decoys=())
    said = score(case, _reply("The indexed code does not seem to mention Kafka; nearest:", G))
    listed = score(case, _reply(NO_MODEL, G))
    assert said.handled and not listed.handled
    assert not said.false_not_found and not said.first_in_gold


def test_summary_cells_count_only_the_cases_each_rule_applies_to() -> None:
    right = _case(id="r")
    wrong = _case(id="w")
    none = _case(id="n", kind="unanswerable", gold=(), decoys=())
    rows = [
        Scored(right, score(right, _reply("ok", G)), changed=False, ms=1.0),
        Scored(wrong, score(wrong, _reply(NO_MODEL, D)), changed=True, ms=1.0),
        Scored(none, score(none, _reply(NOT_ANSWERED, mode="empty")), changed=False, ms=1.0),
    ]
    assert summary_row(rows) == [
        "3",
        "1/2 (50%)",  # first in gold, of the two answerable
        "1/2 (50%)",
        "0.50",  # gold covered: 1.0 and 0.0
        "0/2 (0%)",
        "1/1 (100%)",  # not-found handled, of the one unanswerable
        "1/2 (50%)",  # confidently wrong, of the two definitions
        "1/2 (50%)",  # cites a decoy, of the two with decoys
        "1/3 (33%)",
    ]


def test_case_files_are_checked(tmp_path: Path) -> None:
    good = {"id": "a", "repo": "o/r", "commit": "c", "kind": "how", "question": "q"}
    good["gold"] = [{"path": "x.py", "start": 1, "end": 2}]
    bad_kind = {**good, "id": "b", "kind": "where"}
    gold_for_none = {**good, "id": "c", "kind": "unanswerable"}
    backwards = {**good, "id": "d", "gold": [{"path": "x.py", "start": 5, "end": 2}]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(good) + "\n")
    assert load_answer_cases([path])[0].gold == (Span("x.py", 1, 2),)
    for row in (bad_kind, gold_for_none, backwards):
        path.write_text(json.dumps(row) + "\n")
        with pytest.raises(CaseError):
            load_answer_cases([path])


# -- end to end ---------------------------------------------------------------------------------


def _write_cases(tmp_path: Path, shop: str) -> Path:
    def gold(path: str, start: int, end: int) -> list[dict[str, object]]:
        return [{"path": path, "start": start, "end": end}]

    rows = [
        ("d", "definition", "where is charge_card defined?", gold("shop/payment.py", 4, 10), ()),
        ("c", "callers", "who calls charge_card?", gold("shop/checkout.py", 8, 8), ()),
        ("u", "unanswerable", "where do we publish events to Kafka?", [], ()),
    ]
    path = tmp_path / "cases.jsonl"
    lines = []
    for case_id, kind, question, spans, _ in rows:
        row = {"id": case_id, "repo": "acme/shop", "commit": shop, "kind": kind}
        row.update({"question": question, "gold": spans, "decoys": [], "notes": ""})
        if kind == "callers":
            row["target"] = gold("shop/payment.py", 4, 10)
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_harness_asks_each_question_alone_and_beside_another_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shop = one_commit_clone(
        tmp_path, "shop", {"shop/payment.py": PAYMENT, "shop/checkout.py": CHECKOUT}
    )
    one_commit_clone(tmp_path, "weather", {"weather/forecast.py": WEATHER})
    cases, out = _write_cases(tmp_path, shop), tmp_path / "out.json"
    argv = ["--clones", str(tmp_path / "clones"), "--cases", str(cases), "--out", str(out)]
    assert answers_eval.main([*argv, "--unrelated", "acme/weather"]) == 0
    result = json.loads(out.read_text())
    assert result["meta"]["unrelated"]["acme/shop"].startswith("acme/weather@")
    by_id = {c["id"]: c for c in result["cases"]}
    assert sorted(by_id) == ["c", "d", "u"]
    assert by_id["d"]["verdict"]["first_in_gold"], by_id["d"]["text"]  # one definition, by name
    assert by_id["d"]["citations"][0].startswith("shop/payment.py:L")
    assert all(isinstance(c["changed"], bool) for c in result["cases"])
    # The tables count what the verdicts say.
    kinds = {row[0]: row for row in result["by_kind"]}
    assert sorted(kinds) == ["ALL", "callers", "definition", "unanswerable"]
    firsts = sum(
        c["verdict"]["first_in_gold"] for c in result["cases"] if c["kind"] != "unanswerable"
    )
    assert kinds["ALL"][2].startswith(f"{firsts}/2 ")
    handled = by_id["u"]["verdict"]["handled"]
    assert kinds["unanswerable"][6] == ("1/1 (100%)" if handled else "0/1 (0%)")
    assert result["by_repo"][0][:2] == ["acme/shop", "3"]
    assert "| kind" in capsys.readouterr().out


def test_one_repository_needs_an_unrelated_one_named(tmp_path: Path) -> None:
    shop = one_commit_clone(
        tmp_path, "shop", {"shop/payment.py": PAYMENT, "shop/checkout.py": CHECKOUT}
    )
    cases = _write_cases(tmp_path, shop)
    assert answers_eval.main(["--clones", str(tmp_path / "clones"), "--cases", str(cases)]) == 2
