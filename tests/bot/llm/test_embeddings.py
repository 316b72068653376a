"""Embedding usage is counted per call: concurrent answers and ingests each report their own.

Core, its answer queue, the real openai SDK and the fake OpenAI server. The fake
records every embeddings request it answered (inputs and the usage it reported);
each input is traced to the question (or hypothetical answer) or ingest that
sent it, and each answer's and report's figure must equal the sum the fake
reported for its own requests. The fake's gate holds the first requests until
they are all in flight, so the calls overlap for certain: a figure read from a
counter shared by the embedder would include a neighbour's tokens.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.ingest.pipeline import IngestReport
from bot.models import Answer
from bot.retrieval.hyde import PROMPT as HYDE_PROMPT
from tests.servers.openai_fake import FakeOpenAI, ServedEmbeddings
from tests.support.shop import build_shop

# Different lengths, so a figure that belongs to another answer cannot pass for this one's.
QUESTIONS = (
    "retry webhooks",
    "where do we retry failed webhooks with exponential backoff?",
    "how is the monthly amount computed for a plan with many seats and a volume discount?",
    "charge customer card",
    "what happens to deliveries that did not go through, and how many attempts do we make "
    "before giving up on a subscriber URL that keeps failing with server errors?",
    "README billing section",
    "which function decides the price per seat and where is the discount above fifty seats "
    "applied, and is the result a Decimal or a float when the gateway charges the card?",
    "sleep between attempts",
)


class Traced:
    """The fake's chat replies, remembering which question each hypothetical answer came from."""

    def __init__(self) -> None:
        self.hypothetical: dict[str, str] = {}  # HyDE text -> the question it answers
        self._lock = threading.Lock()

    def reply(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        if system == HYDE_PROMPT:
            question = body["messages"][-1]["content"]
            words = re.findall(r"[a-z]+", question.lower())
            text = f"def {'_'.join(words[:6])}(event):\n    return retry(event, {len(words)})"
            with self._lock:
                self.hypothetical[text] = question
            return text
        numbers = re.findall(r' n="(\d+)"', body["messages"][-1]["content"])
        return f"See [{numbers[0]}]." if numbers else "The indexed code does not answer this."

    def owner(self, text: str) -> str | None:
        """The question an embedded input belongs to; None for anything else (ingest)."""
        if text in QUESTIONS:
            return text
        with self._lock:
            return self.hypothetical.get(text)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def traced(fake: FakeOpenAI) -> Traced:
    traced = Traced()
    fake.chat_reply = traced.reply
    return traced


@pytest.fixture
def core(fake: FakeOpenAI, traced: Traced, make_repo: Any) -> Iterator[Core]:
    env = {
        "OPENAI_API_KEY": "sk-test-abcdef",
        "OPENAI_BASE_URL": fake.base_url,
        "CODECITE_HYDE": "1",  # the hypothetical answer is embedded too: two queries per answer
    }
    made = Core.from_settings(Settings(**env), FileConfig())
    repo = make_repo("shop")
    build_shop(repo)
    made.index_repo(str(repo.path), name="shop")
    yield made
    made.close()


def tokens_by_owner(served: list[ServedEmbeddings], traced: Traced) -> dict[str | None, int]:
    """Tokens the fake reported, per question (None: requests of no question, i.e. ingest)."""
    totals: dict[str | None, int] = {}
    for request in served:
        owners = {traced.owner(text) for text in request.inputs}
        assert len(owners) == 1, f"one request mixed inputs of {owners}"
        owner = owners.pop()
        totals[owner] = totals.get(owner, 0) + request.total_tokens
    return totals


def ask_all_through_the_queue(core: Core, questions: tuple[str, ...]) -> dict[str, Answer]:
    tickets = {q: core.submit(lambda q=q: core.ask(q, CLI)) for q in questions}
    return {q: t.future.result(timeout=60) for q, t in tickets.items()}


def test_concurrent_answers_each_report_their_own_embedding_tokens(
    core: Core, fake: FakeOpenAI, traced: Traced
) -> None:
    assert core._queue.workers == 4  # the default line: 4 workers
    already = len(fake.embeddings_served)  # the ingest's
    fake.in_flight_peak = 0
    fake.gate(4)  # the four workers' first embedding requests are held until all are in flight
    answers = ask_all_through_the_queue(core, QUESTIONS)
    served = fake.embeddings_served[already:]
    assert fake.in_flight_peak >= 4  # the answers really overlapped
    expected = tokens_by_owner(served, traced)
    assert None not in expected  # every request belonged to a question
    reported = {q: a.usage.embedding_tokens for q, a in answers.items()}
    assert reported == {q: expected[q] for q in QUESTIONS}
    assert len(set(reported.values())) >= 4  # figures of other answers would show
    # Two embeddings per answer (the question and its hypothetical answer), none counted twice.
    assert len(served) == 2 * len(QUESTIONS)
    assert sum(reported.values()) == sum(r.total_tokens for r in served)


def test_a_cached_question_costs_no_embedding_tokens(
    core: Core, fake: FakeOpenAI, traced: Traced
) -> None:
    question = QUESTIONS[1]
    first = core.ask(question, CLI)
    requests = len(fake.embeddings_served)
    again = core.ask(question, CLI)  # the question and its hypothetical answer are both cached
    assert first.usage.embedding_tokens > 0
    assert len(fake.embeddings_served) == requests
    assert again.usage.embedding_tokens == 0
    assert [c.label for c in again.citations] == [c.label for c in first.citations]


def test_an_ingest_under_query_load_reports_only_its_own_embedding_tokens(
    core: Core, fake: FakeOpenAI, traced: Traced, make_repo: Any
) -> None:
    other = make_repo("tools")
    for i in range(12):
        other.write(f"tools/step_{i}.py", f"def step_{i}(state):\n    return state * {i + 2}\n")
    other.commit("tools")
    already = len(fake.embeddings_served)
    fake.in_flight_peak = 0
    fake.gate(3)  # two answers' first embedding requests wait for the ingest's
    reports: list[IngestReport] = []
    ingest = threading.Thread(target=lambda: reports.append(core.index_repo(str(other.path))))
    ingest.start()
    answers = ask_all_through_the_queue(core, QUESTIONS[:2])
    ingest.join(timeout=60)
    (report,) = reports
    assert fake.in_flight_peak >= 3
    served = fake.embeddings_served[already:]
    expected = tokens_by_owner(served, traced)
    ingest_inputs = sum(len(r.inputs) for r in served if traced.owner(r.inputs[0]) is None)
    assert report.embedded_inputs == ingest_inputs == report.chunks_added > 0
    assert report.embedding_tokens == expected[None] > 0
    assert {q: a.usage.embedding_tokens for q, a in answers.items()} == {
        q: expected[q] for q in QUESTIONS[:2]
    }
