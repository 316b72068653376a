"""Suggested prompts from what is indexed: real repositories, a real Core and symbol table."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.answer.suggestions import MAX_PROMPTS, TITLE_CHARS, Prompt, suggested_prompts
from bot.config import ChannelConfig, FileConfig, Settings
from bot.core import CLI, Context, Core
from bot.models import Answer, Citation, Freshness
from bot.retrieval.symbol_questions import MAX_QUESTION_CHARS, detect_symbol_question
from tests.support.shop import build_shop

BILLING = '''"""Invoices."""


def compute_volume_discount(total):
    return total * 0.05 if total > 10_000 else 0


def invoice_total(lines):
    return sum(lines) - compute_volume_discount(sum(lines))
'''
CHANNEL = Context(platform="slack", user="U1", channel="C0SHOP", guild="T1")


def _core(make_repo, config: FileConfig | None = None) -> Core:
    shop = make_repo("shop")
    build_shop(shop)
    billing = make_repo("billing")
    billing.write("billing/invoices.py", BILLING)
    billing.commit("invoices")
    core = Core.from_settings(Settings(), config or FileConfig())
    core.index_repo(str(shop.path), name="shop")
    core.index_repo(str(billing.path), name="billing")
    return core


def test_prompts_name_the_indexed_repositories_and_their_key_symbols(make_repo) -> None:
    core = _core(make_repo)
    prompts = suggested_prompts(core.repo_map(None, CLI))
    messages = [p.message for p in prompts]
    assert len(prompts) == MAX_PROMPTS
    assert messages[:2] == ["How is billing organised?", "How is shop organised?"]
    # Then the most referenced symbol of each repository in turn: billing's, then shop's.
    assert "`compute_volume_discount`" in messages[2]
    shop_names = {c.symbol for c in core.repo_map("shop", CLI).citations}
    assert messages[3].split("`")[1] in shop_names
    for prompt in prompts:
        question = detect_symbol_question(prompt.message)
        assert question is not None, prompt  # the symbol table answers it exactly
        assert len(prompt.title) <= TITLE_CHARS and len(prompt.message) <= MAX_QUESTION_CHARS
    callers = detect_symbol_question(messages[2])
    assert callers is not None and callers.kind == "callers"  # "...and who calls it?"


def test_prompts_keep_to_the_askers_scope(make_repo) -> None:
    config = FileConfig(channels={"C0SHOP": ChannelConfig(repos=("shop",))})
    core = _core(make_repo, config)
    prompts = suggested_prompts(core.repo_map(None, CHANNEL))
    assert prompts[0] == Prompt("How is shop organised?", "How is shop organised?")
    assert len(prompts) == MAX_PROMPTS  # one repository: its overview and three symbols
    text = " ".join(p.title + p.message for p in prompts)
    assert "billing" not in text and "compute_volume_discount" not in text


def _map(*cites: tuple[str, str], repos: tuple[str, ...]) -> Answer:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    citations = tuple(Citation(repo, "a.py", 1, 2, "", symbol) for repo, symbol in cites)
    freshness = tuple(Freshness(r, "main", "abc", at) for r in repos)
    return Answer("map", citations, freshness, mode="extractive")


def test_nothing_indexed_means_no_prompts_and_odd_names_are_left_out() -> None:
    assert suggested_prompts(_map(repos=())) == []
    long = "x" * 300
    prompts = suggested_prompts(
        _map(("a", long), ("a", "bad`name"), ("a", "ok_name"), ("a", "ok_name"), repos=("a",))
    )
    assert [p.message for p in prompts] == [
        "How is a organised?",
        "Where is `ok_name` defined and who calls it?",
    ]


def test_without_symbols_every_repository_gets_an_overview() -> None:
    prompts = suggested_prompts(_map(repos=("a", "b", "c", "d", "e")))
    assert [p.message for p in prompts] == [f"How is {r} organised?" for r in "abcd"]
    assert suggested_prompts(_map(repos=("a",)), limit=0) == []
