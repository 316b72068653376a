"""Fault injection with CODECITE_INDEX=pinecone: the real SDK and the Core against the fake.

Rate limits, server errors and hangs on queries, and failures in the middle of
an ingest's writes. What a user must see: the answer, or one clear sentence
(no traceback, no raw service text) and an answer again once the fault
clears; the previous index state keeps answering while an update fails, and
running the update again converges on exactly the records it should hold.

Retry layers: the SDK retries 429/5xx/timeouts itself (3 retries) and
`PineconeData` runs each call under its own 3-attempt policy, so a call that
keeps failing is tried 12 times. The SDK's sleeps are recorded and made
instant and our policy's delays set to zero; its per-host retry budget is
process-wide state, so it is reset for each test.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from pinecone import Pinecone
from pinecone._internal.http_client import get_budget_registry

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.errors import BotError, StoreError
from bot.index.pinecone import client as pinecone_client
from bot.index.pinecone.index import STATE_FILE, PineconeIndex
from bot.index.pinecone.records import CHUNK, FILE
from bot.runtime.retry import RetryPolicy
from bot.wiring import make_embedder, make_llm
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.support.fault_tally import FaultTally, tally_fixture
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop

DIM = 64
QUESTION = "where do we retry failed webhooks?"
WEBHOOKS = "shop/webhooks.py"
TRIES = 12  # 4 SDK attempts (1 + 3 retries) under each of our 3 attempts
UNAVAILABLE = "Pinecone is unavailable right now; please try again later."
UNREACHABLE = "Pinecone could not be reached; please try again later."
HUNG_TIMEOUT = 0.3  # seconds; the SDK's default is 30 and codecite cannot change it

faults = tally_fixture()


@pytest.fixture(autouse=True)
def sdk_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", waits.append)
    no_delay = RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0)
    monkeypatch.setattr(pinecone_client, "DEFAULT_POLICY", no_delay)
    get_budget_registry()._reset()  # the SDK's retry budget is per host, and every fake is 127.0.0.1
    return waits


@pytest.fixture
def services() -> Iterator[tuple[FakeOpenAI, FakePinecone]]:
    with FakeOpenAI(dimensions=DIM) as openai, FakePinecone(dimension=DIM) as pinecone:
        yield openai, pinecone


@pytest.fixture
def shop(make_repo) -> GitRepo:  # type: ignore[no-untyped-def]
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    return repo


def settings_for(openai: FakeOpenAI, pinecone: FakePinecone) -> Settings:
    return Settings(
        OPENAI_API_KEY="sk-test-abcdef",
        OPENAI_BASE_URL=openai.base_url,
        CODECITE_EMBED_DIMENSIONS=str(DIM),
        CODECITE_INDEX="pinecone",
        PINECONE_API_KEY=pinecone.api_key,
        PINECONE_HOST=pinecone.url,
    )


@dataclass(frozen=True)
class Seen:
    commit: str
    text: str
    labels: tuple[str, ...]


def seen(core: Core) -> Seen:
    [state] = core.index.repo_states()
    answer = core.ask(QUESTION, CLI)
    assert answer.mode == "llm" and answer.citations  # what is cited is retrieval's business
    return Seen(state.commit, answer.text, tuple(c.label for c in answer.citations))


def statuses(pinecone: FakePinecone, since: int, path: str) -> list[int]:
    return [r.status for r in pinecone.requests[since:] if r.path == path]


def assert_clear(exc: BotError, says: str) -> None:
    message = exc.user_message
    assert message == says
    assert "\n" not in message and "Traceback" not in message and "127.0.0.1" not in message
    assert "injected fault" not in message  # the service's own text stays in the logs


@pytest.fixture
def core(services: tuple[FakeOpenAI, FakePinecone], shop: GitRepo) -> Iterator[Core]:
    core = Core.from_settings(settings_for(*services), FileConfig())
    assert isinstance(core.index, PineconeIndex)
    core.index.init_index(DIM)
    core.index_repo(str(shop.path), name="shop")
    yield core
    core.close()


# -- queries ---------------------------------------------------------------------------------


def test_rate_limited_query_is_retried_by_the_sdk(
    core: Core,
    services: tuple[FakeOpenAI, FakePinecone],
    sdk_waits: list[float],
    faults: FaultTally,
) -> None:
    _, pinecone = services
    before = seen(core)
    mark = len(pinecone.requests)
    pinecone.fail_next(2, 429, retry_after=0, path="/query")
    faults.inject("429 query", 2)
    assert seen(core) == before
    assert statuses(pinecone, mark, "/query")[:3] == [429, 429, 200]
    assert len(sdk_waits) == 2  # the SDK waited (Retry-After: 0) before each retry
    faults.survive("429 query", 2)


def test_query_failing_for_good_is_one_clear_sentence_then_recovers(
    core: Core, services: tuple[FakeOpenAI, FakePinecone], faults: FaultTally
) -> None:
    _, pinecone = services
    before = seen(core)
    mark = len(pinecone.requests)
    pinecone.fail_next(TRIES, 500, path="/query")
    faults.inject("500 query", TRIES)
    with pytest.raises(StoreError) as info:
        core.ask(QUESTION, CLI)
    assert_clear(info.value, UNAVAILABLE)
    assert statuses(pinecone, mark, "/query") == [500] * TRIES  # every fault was spent on it
    assert seen(core) == before  # the fault cleared: the same answer as before
    faults.survive("500 query", TRIES)


def hang_prone_core(settings: Settings) -> Core:
    """The Core with a short SDK timeout, which Settings cannot express (see module doc).

    (A `retry_config` would not help: the SDK does not hand it to the REST data plane.)
    """
    key = settings.pinecone_api_key
    pc = Pinecone(api_key=key.get_secret_value() if key else "", timeout=HUNG_TIMEOUT)
    index = PineconeIndex(
        pc, settings.home / STATE_FILE, host=settings.pinecone_host, dimension=DIM
    )
    llm, embedder = make_llm(settings), make_embedder(settings)
    return Core(settings, FileConfig(), index, llm=llm, embedder=embedder)


def test_a_hung_query_times_out_and_is_retried_then_gives_up_clearly(
    services: tuple[FakeOpenAI, FakePinecone], shop: GitRepo, faults: FaultTally
) -> None:
    openai, pinecone = services
    core = hang_prone_core(settings_for(openai, pinecone))
    try:
        core.index_repo(str(shop.path), name="shop")
        before = seen(core)
        mark = len(pinecone.requests)
        pinecone.delay_next(30)  # far beyond the timeout: only the timeout ends the wait
        faults.inject("timeout")
        assert seen(core) == before
        assert statuses(pinecone, mark, "/query")[-2:] == [200, 200]  # the retry, the next
        faults.survive("timeout")

        pinecone.delay_next(30, n=TRIES)
        faults.inject("timeout", TRIES)
        with pytest.raises(StoreError) as info:
            core.ask(QUESTION, CLI)
        assert_clear(info.value, UNREACHABLE)
        assert seen(core) == before
        faults.survive("timeout", TRIES)
    finally:
        core.close()


# -- ingest ----------------------------------------------------------------------------------


def stored(pinecone: FakePinecone, kind: str) -> set[str]:
    """Ids of the records of one kind (chunk, file) the fake holds."""
    return {
        rid for rid, rec in pinecone.records().items() if (rec.metadata or {}).get("rec") == kind
    }


def assert_converged(core: Core, pinecone: FakePinecone) -> None:
    """Pinecone holds exactly the chunks and files the state says are indexed: no strays."""
    manifest = core.index.manifest("shop")
    chunk_ids = {cid for entry in manifest.values() for cid in entry.chunk_ids}
    assert set(core.index.ids_by_prefix("shop#")) == chunk_ids
    assert len(stored(pinecone, CHUNK)) == len(chunk_ids)
    assert len(stored(pinecone, FILE)) == len(manifest)


def test_upsert_failing_keeps_the_previous_state_and_a_rerun_converges(
    core: Core, services: tuple[FakeOpenAI, FakePinecone], shop: GitRepo, faults: FaultTally
) -> None:
    _, pinecone = services
    before = seen(core)
    shop.write("shop/refunds.py", "def refund_partial_invoice(invoice, amount):\n    pass\n")
    new_commit = shop.commit("refunds")
    pinecone.fail_next(TRIES, 503, path="/vectors/upsert")
    faults.inject("503 upsert", TRIES)
    with pytest.raises(StoreError) as info:
        core.index_repo(str(shop.path), name="shop")
    assert_clear(info.value, UNAVAILABLE)
    assert seen(core) == before
    assert all(h.chunk.path != "shop/refunds.py" for h in core.search("refund_partial", CLI))
    last = core.runs.last("shop")
    assert last is not None and last.error == UNAVAILABLE  # `status` shows the failed run
    faults.survive("503 upsert", TRIES)

    report = core.index_repo(str(shop.path), name="shop")
    assert report.commit == new_commit and report.files_added == 1
    assert core.search("refund_partial_invoice", CLI, top_k=1)[0].chunk.path == "shop/refunds.py"
    assert_converged(core, pinecone)


def test_delete_failing_after_the_new_records_are_written_converges_on_rerun(
    core: Core, services: tuple[FakeOpenAI, FakePinecone], shop: GitRepo, faults: FaultTally
) -> None:
    _, pinecone = services
    before = seen(core)
    renamed = (shop.path / WEBHOOKS).read_text().replace("retry_failed_webhooks", "redeliver_hooks")
    shop.write(WEBHOOKS, renamed)
    new_commit = shop.commit("rename")
    mark = len(pinecone.requests)
    pinecone.fail_next(TRIES, 500, path="/vectors/delete")
    faults.inject("500 delete", TRIES)
    with pytest.raises(StoreError) as info:
        core.index_repo(str(shop.path), name="shop")
    assert_clear(info.value, UNAVAILABLE)
    assert 200 in statuses(pinecone, mark, "/vectors/upsert")  # it failed midway, not up front
    assert [s.commit for s in core.index.repo_states()] == [before.commit]
    answer = core.ask(QUESTION, CLI)  # readers may see new chunks beside old ones, but answer
    assert answer.mode == "llm" and answer.citations
    faults.survive("500 delete", TRIES)

    report = core.index_repo(str(shop.path), name="shop")
    assert report.commit == new_commit
    assert_converged(core, pinecone)
    texts = [h.chunk.text for h in core.search("redeliver_hooks retry_failed_webhooks", CLI)]
    assert any("redeliver_hooks" in t for t in texts)
    assert not any("retry_failed_webhooks" in t for t in texts)  # the stale chunk is gone
