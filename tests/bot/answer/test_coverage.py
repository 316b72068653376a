"""Answers that say when the indexed code does not cover the question: no model, a model
(the real openai SDK against the fake server), streamed and not."""

from __future__ import annotations

import re

import pytest

from bot.answer.coverage import explain_not_answered
from bot.answer.extractive import NO_MODEL
from bot.answer.prompts import NOT_ANSWERED
from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from tests.servers.openai_fake import FakeOpenAI
from tests.support.shop import build_shop

STRIPE = "how do we charge customers through Stripe?"
SAYS_STRIPE = "The indexed code does not seem to mention Stripe"


@pytest.fixture
def shop(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    return repo


def _core(shop, **env: str) -> Core:
    core = Core.from_settings(Settings(**env), FileConfig())
    core.index_repo(str(shop.path), name="shop")
    return core


def _with_model(shop, fake: FakeOpenAI) -> Core:
    return _core(
        shop,
        OPENAI_API_KEY="sk-test-123456",
        OPENAI_BASE_URL=fake.base_url,
        CODECITE_EMBED_MODEL="none",
    )


def _declines_citing_the_first_source(body: dict) -> str:
    """The model's standard refusal, then the nearest place it saw."""
    first = re.findall(r' n="(\d+)"', body["messages"][-1]["content"])[0]
    return f"{NOT_ANSWERED} The closest is billing [{first}]."


def test_without_a_model_the_answer_says_so_and_lists_the_nearest_places(shop):
    core = _core(shop)
    answer = core.ask(STRIPE, CLI)
    assert answer.mode == "extractive"
    assert answer.text.startswith(f"{SAYS_STRIPE}; the nearest places are:\n\n**shop/billing.py:L")
    assert answer.citations and answer.citations[0].path == "shop/billing.py"


def test_a_covered_question_gets_no_caveat(shop):
    core = _core(shop)
    answer = core.ask("where do we retry failed webhooks?", CLI)
    assert answer.text.startswith(NO_MODEL)


def test_a_symbol_question_speaks_for_itself(shop):
    core = _core(shop)
    answer = core.ask("where is `charge_with_stripe` defined?", CLI)
    assert answer.text.startswith("I found no definition of that name")
    assert "does not seem to mention" not in answer.text


def test_the_model_hears_what_the_code_never_mentions_and_its_refusal_is_made_specific(shop):
    with FakeOpenAI() as fake:
        fake.chat_reply = _declines_citing_the_first_source
        core = _with_model(shop, fake)
        answer = core.ask(STRIPE, CLI)
        prompt = fake.bodies("/chat/completions")[-1]["messages"][-1]["content"]
    assert "From codecite's index (exact): no indexed file in scope mentions Stripe." in prompt
    assert answer.mode == "llm"
    assert answer.text == f"{SAYS_STRIPE}. The closest is billing ({answer.citations[0].label})."


def test_a_covered_question_keeps_the_prompt_and_the_reply_as_they_were(shop):
    with FakeOpenAI() as fake:
        fake.chat_reply = lambda body: NOT_ANSWERED
        core = _with_model(shop, fake)
        answer = core.ask("where do we retry failed webhooks?", CLI)
        prompt = fake.bodies("/chat/completions")[-1]["messages"][-1]["content"]
    assert "From codecite's index" not in prompt
    assert answer.text == NOT_ANSWERED


def test_a_model_that_answers_anyway_keeps_its_answer(shop):
    reply = "Customers are charged by the gateway [1]; nothing here talks to Stripe."
    with FakeOpenAI() as fake:
        fake.chat_reply = lambda body: reply
        answer = _with_model(shop, fake).ask(STRIPE, CLI)
    assert answer.text.startswith("Customers are charged by the gateway (shop/")
    assert "does not seem" not in answer.text


def test_streamed_the_generic_refusal_is_never_shown(shop):
    with FakeOpenAI() as fake:
        fake.chat_reply = _declines_citing_the_first_source
        fake.stream_split = lambda text: [text[i : i + 3] for i in range(0, len(text), 3)]
        stream = _with_model(shop, fake).ask_stream(STRIPE, CLI)
        pieces = list(stream)
        answer = stream.answer
    shown = ""
    for piece in pieces:
        shown += piece
        assert not shown.startswith("The indexed code does not a")  # "does not answer this"
    assert shown == answer.text
    assert answer.text.startswith(f"{SAYS_STRIPE}. The closest is billing (shop/")


def test_explain_not_answered_only_touches_the_standard_refusal():
    sentence = "The indexed code does not seem to mention Kafka"
    assert explain_not_answered(f"  {NOT_ANSWERED} More.", sentence) == f"{sentence}. More."
    assert explain_not_answered("It uses a queue.", sentence) == "It uses a queue."
    assert explain_not_answered(NOT_ANSWERED, "") == NOT_ANSWERED
