"""Fault injection end to end: the real openai SDK, our retries and the Core, against the fake.

Each test breaks the model or the embedding service in one way (rate limits,
server errors, hangs, dropped connections, a service that is down, a wrong
key) and checks the outcome a user would see: either the answer still comes,
or one clear sentence; the index is never damaged and the next question works.
The module counts the faults it injected and how many were survived, and
prints the totals at the end of the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.errors import BotError, ServiceError, ServiceUnavailable
from bot.llm.embedding_cache import EmbeddingCache
from bot.llm.openai_chat import OpenAIChat
from bot.llm.openai_embedder import OpenAIEmbedder
from bot.wiring import make_index
from tests.servers.openai_fake import FakeOpenAI
from tests.support.fault_tally import FaultTally, tally_fixture
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop

KEY = "sk-test-faults-0123456789"
QUESTION = "where do we retry failed webhooks?"
WEBHOOKS = "shop/webhooks.py"


faults = tally_fixture()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def shop(make_repo) -> GitRepo:
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    return repo


@dataclass
class Rig:
    """A Core whose model and embedder are the real clients, with their waits recorded."""

    core: Core
    waits: list[float]
    chat: OpenAIChat
    embedder: OpenAIEmbedder | None

    def close(self) -> None:
        self.core.close()
        self.chat.close()
        if self.embedder is not None:
            self.embedder.close()
            if self.embedder.cache is not None:
                self.embedder.cache.close()


def rig(
    fake: FakeOpenAI, *, chat_retries: int = 3, embed_url: str | None = None, **env: str
) -> Rig:
    settings = Settings(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake.base_url, **env)
    waits: list[float] = []  # backoff sleeps happen instantly, but are recorded
    chat = OpenAIChat(
        settings.chat_model,
        api_key=KEY,
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout,
        max_retries=chat_retries,
        sleep=waits.append,
    )
    embedder = None
    if settings.embeddings_configured:
        embedder = OpenAIEmbedder(
            settings.embed_model,
            api_key=KEY,
            base_url=embed_url or settings.openai_base_url,
            cache=EmbeddingCache(settings.home / "embeddings.sqlite"),
            timeout=settings.llm_timeout,
            sleep=waits.append,
        )
    core = Core(settings, FileConfig(), make_index(settings), llm=chat, embedder=embedder)
    return Rig(core, waits, chat, embedder)


@dataclass(frozen=True)
class Seen:
    """What must survive any fault: the indexed state and the answer to a known question."""

    state: tuple[str, int, int]
    text: str
    labels: tuple[str, ...]


def seen(core: Core) -> Seen:
    state = core.index.repo_states()[0]
    answer = core.ask(QUESTION, CLI)
    assert answer.mode == "llm"
    return Seen(
        (state.commit, state.files, state.chunks),
        answer.text,
        tuple(c.label for c in answer.citations),
    )


def statuses(fake: FakeOpenAI, since: int, path: str = "/chat/completions") -> list[int]:
    return [r.status for r in fake.requests[since:] if r.path.endswith(path)]


def assert_clear(exc: BotError, says: str) -> None:
    message = exc.user_message
    assert says in message
    assert "\n" not in message and KEY not in message and "Traceback" not in message
    assert "127.0.0.1" not in message  # no raw error text


# -- the language model ----------------------------------------------------------------------


def test_rate_limited_then_recovers(fake: FakeOpenAI, shop: GitRepo, faults: FaultTally) -> None:
    # The factory's wiring (Core.from_settings), not a hand-built client.
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake.base_url}
    core = Core.from_settings(Settings(**env), FileConfig())
    try:
        core.index_repo(str(shop.path), name="shop")
        before = seen(core)  # also warms the query-embedding cache: only the chat is called next
        mark = len(fake.requests)
        fake.fail_next(429, count=2, retry_after=0)
        faults.inject("429", 2)
        answer = core.ask(QUESTION, CLI)
        assert statuses(fake, mark) == [429, 429, 200]
        assert (answer.text, tuple(c.label for c in answer.citations)) == (
            before.text,
            before.labels,
        )
        faults.survive("429", 2)
    finally:
        core.close()


def test_server_errors_exhausted_fail_cleanly_and_the_next_question_works(
    fake: FakeOpenAI, shop: GitRepo, faults: FaultTally
) -> None:
    r = rig(fake)
    try:
        r.core.index_repo(str(shop.path), name="shop")
        before = seen(r.core)
        mark = len(fake.requests)
        fake.fail_next(500, count=4)
        faults.inject("500", 4)
        with pytest.raises(ServiceError) as info:
            r.core.ask(QUESTION, CLI)
        assert_clear(info.value, "The language model failed to answer; please try again.")
        assert statuses(fake, mark) == [500, 500, 500, 500]  # 1 try + 3 retries, then give up
        assert len(r.waits) == 3 and r.waits == sorted(r.waits)  # growing backoff
        assert seen(r.core) == before
        faults.survive("500", 4)
    finally:
        r.close()


def test_a_hung_model_times_out_and_the_retry_answers(
    fake: FakeOpenAI, shop: GitRepo, faults: FaultTally
) -> None:
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake.base_url, "CODECITE_LLM_TIMEOUT": "0.75"}
    core = Core.from_settings(Settings(**env), FileConfig())
    try:
        core.index_repo(str(shop.path), name="shop")
        before = seen(core)
        mark = len(fake.requests)
        fake.delay_next(30)  # far longer than the timeout: only CODECITE_LLM_TIMEOUT ends it
        faults.inject("timeout")
        answer = core.ask(QUESTION, CLI)
        assert answer.text == before.text
        assert len(statuses(fake, mark)) == 2  # the hung request, then the retry
        faults.survive("timeout")
    finally:
        core.close()


def test_timeouts_exhausted_fail_cleanly(
    fake: FakeOpenAI, shop: GitRepo, faults: FaultTally
) -> None:
    r = rig(fake, chat_retries=1, CODECITE_LLM_TIMEOUT="0.75")
    try:
        r.core.index_repo(str(shop.path), name="shop")
        before = seen(r.core)
        fake.delay_next(30, count=2)
        faults.inject("timeout", 2)
        with pytest.raises(ServiceError) as info:
            r.core.ask(QUESTION, CLI)
        assert_clear(info.value, "The language model took too long to answer; please try again.")
        assert seen(r.core) == before
        faults.survive("timeout", 2)
    finally:
        r.close()


def test_dropped_connections(fake: FakeOpenAI, shop: GitRepo, faults: FaultTally) -> None:
    r = rig(fake)
    try:
        r.core.index_repo(str(shop.path), name="shop")
        before = seen(r.core)
        mark = len(fake.requests)
        fake.drop_next()
        faults.inject("dropped")
        assert r.core.ask(QUESTION, CLI).text == before.text
        assert statuses(fake, mark) == [-1, 200]
        faults.survive("dropped")

        fake.drop_next(4)
        faults.inject("dropped", 4)
        with pytest.raises(ServiceError) as info:
            r.core.ask(QUESTION, CLI)
        assert_clear(info.value, "Could not reach the language model; please try again.")
        assert seen(r.core) == before
        faults.survive("dropped", 4)
    finally:
        r.close()


def test_a_wrong_key_is_reported_without_the_key(shop: GitRepo, faults: FaultTally) -> None:
    with FakeOpenAI(api_key="sk-the-right-key-999") as strict:  # refuses our KEY
        r = rig(strict)
        try:
            faults.inject("401")
            with pytest.raises(ServiceUnavailable) as info:
                r.core.index_repo(str(shop.path), name="shop")  # the embeddings are refused
            assert_clear(info.value, "rejected codecite's credentials")
            assert r.core.index.repo_states() == []  # nothing half-written
            faults.survive("401")
        finally:
            r.close()
        r = rig(strict, CODECITE_EMBED_MODEL="none")
        try:
            r.core.index_repo(str(shop.path), name="shop")  # lexical only: no key needed
            faults.inject("401")
            with pytest.raises(ServiceUnavailable) as info:
                r.core.ask(QUESTION, CLI)
            assert_clear(info.value, "rejected codecite's credentials")
            assert "OPENAI_API_KEY" in info.value.user_message
            assert r.waits == []  # a wrong key is not worth retrying
            assert [s.name for s in r.core.index.repo_states()] == ["shop"]
            faults.survive("401")
        finally:
            r.close()


# -- the embedding service -------------------------------------------------------------------


def test_embeddings_failing_during_a_query_fall_back_to_lexical(
    fake: FakeOpenAI, shop: GitRepo, faults: FaultTally
) -> None:
    r = rig(fake)
    try:
        r.core.index_repo(str(shop.path), name="shop")
        before = seen(r.core)
        mark = len(fake.requests)
        fake.fail_next(503, count=6)  # every attempt at embedding the new question fails
        faults.inject("503 embeddings", 6)
        answer = r.core.ask("how are failed webhook deliveries retried with backoff?", CLI)
        assert statuses(fake, mark, "/embeddings") == [503] * 6
        assert statuses(fake, mark) == [200]  # and the model still answered
        assert answer.mode == "llm" and answer.usage.embedding_tokens == 0
        assert answer.citations and answer.citations[0].path == WEBHOOKS
        assert seen(r.core) == before
        faults.survive("503 embeddings", 6)
    finally:
        r.close()


def test_embedding_service_down_during_a_query_falls_back_to_lexical(
    fake: FakeOpenAI, shop: GitRepo, faults: FaultTally
) -> None:
    with FakeOpenAI() as embeddings:
        r = rig(fake, embed_url=embeddings.base_url)
        try:
            r.core.index_repo(str(shop.path), name="shop")
            embeddings.stop()  # the service goes away: connections are refused
            faults.inject("embeddings down")
            answer = r.core.ask("how are failed webhook deliveries retried with backoff?", CLI)
            assert answer.mode == "llm"
            assert answer.citations and answer.citations[0].path == WEBHOOKS
            assert len(r.waits) == 5  # it was retried, then skipped
            faults.survive("embeddings down")
        finally:
            r.close()


def test_embeddings_failing_during_ingest_keep_the_previous_index(
    fake: FakeOpenAI, shop: GitRepo, faults: FaultTally
) -> None:
    r = rig(fake)
    try:
        r.core.index_repo(str(shop.path), name="shop")
        before = seen(r.core)
        shop.write("shop/refunds.py", "def refund_partial_invoice(invoice, amount):\n    pass\n")
        new_commit = shop.commit("refunds")
        fake.fail_next(503, count=6)
        faults.inject("503 embeddings", 6)
        with pytest.raises(ServiceError) as info:
            r.core.index_repo(str(shop.path), name="shop")
        assert_clear(info.value, "The embedding service failed to answer; please try again.")
        # Nothing of the failed update is visible; everything before it still answers.
        assert seen(r.core) == before
        hits = r.core.search("refund_partial_invoice", CLI, top_k=20)
        assert all(h.chunk.path != "shop/refunds.py" for h in hits)
        last = r.core.runs.last("shop")
        assert last is not None and last.error  # status will show the failed run
        faults.survive("503 embeddings", 6)

        report = r.core.index_repo(str(shop.path), name="shop")  # the service is back
        assert report.commit == new_commit and report.files_added == 1
        assert r.core.search("refund_partial_invoice", CLI, top_k=1)[0].chunk.path == (
            "shop/refunds.py"
        )
    finally:
        r.close()
