"""Damaged stores never stop the bot (issue 12, item 5).

For each file codecite keeps beside its index (run log, feedback, event claims,
embedding cache, symbol table, Pinecone state, the Discord command list) and
each way a file gets damaged (garbled whole, one damaged page in the middle of
a file holding real rows, truncated): the command a user runs succeeds, the
damaged file is kept aside, one sentence says what happened where the user
looks (the terminal's `warning:` line, `status`, the server log), and there is
no traceback.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.common.dedupe import EventDedupe
from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.index.pinecone.state import ChunkRow, FileRow, PineconeState, rebuild_wanted
from bot.llm.embedding_cache import EmbeddingCache
from bot.models import Answer, RepoState
from bot.store.feedback import FeedbackStore
from bot.store.runs import Run, RunLog
from bot.store.sqlite import notices
from tests.support.cli import run_cli
from tests.support.damage import SQLITE_DAMAGE, TEXT_DAMAGE, damage_page, settle
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop

ROOT = Path(__file__).resolve().parents[2]
DAMAGES = sorted(SQLITE_DAMAGE)
DEFINED = "Where is `charge_customer` defined?"


@dataclass(frozen=True)
class World:
    home: Path
    shop: GitRepo

    def settings(self, **more: object) -> Settings:
        return Settings(CODECITE_HOME=self.home, **more)  # type: ignore[arg-type]

    def core(self) -> Core:
        return Core.from_settings(self.settings(), FileConfig())

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(self.home, *args, columns=200)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The shop indexed (index, symbol table, one run logged) in a data directory."""
    root = tmp_path_factory.mktemp("damaged-stores")
    shop = GitRepo(root / "shop")
    build_shop(shop)
    world = World(root / "home", shop)
    core = world.core()
    try:
        core.index_repo(str(shop.path), name="shop")
        assert core.ask(DEFINED, CLI).text.startswith("`charge_customer` is defined in")
    finally:
        core.close()
    return world


@pytest.fixture
def world(base: World, tmp_path: Path) -> World:
    home = tmp_path / "home"
    shutil.copytree(base.home, home)
    return World(home, base.shop)


def kept_aside(folder: Path, name: str) -> Path:
    [kept] = folder.glob(f"{name}.damaged-*")
    return kept


def sentence(what: str, name: str) -> str:
    return f"The {what} was damaged and has been started afresh (kept as {name}.damaged-"


def assert_one_liners(result: subprocess.CompletedProcess[str]) -> None:
    everything = result.stdout + result.stderr
    assert "Traceback" not in everything and "incident" not in everything, everything
    assert result.returncode == 0, everything
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert all(line.startswith("warning:") for line in lines), result.stderr


def warned(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


# -- the run log: `codecite status` and `codecite reindex` --------------------------------------


def fill_runs(home: Path) -> None:
    log = RunLog(home / "runs.sqlite")
    started = datetime(2026, 11, 30, 12, tzinfo=UTC)
    for n in range(150):
        log.record(Run(f"repo{n % 5}", started, 1.5, "schedule", commit=f"{n:040x}"))
        log.set_next_run(f"repo{n % 5}", started)
    log.close()


@pytest.mark.parametrize("damage", DAMAGES)
def test_run_log(world: World, damage: str) -> None:
    fill_runs(world.home)
    SQLITE_DAMAGE[damage](world.home / "runs.sqlite")
    status = world.cli("status")
    assert_one_liners(status)
    said = sentence("run log", "runs.sqlite")
    assert said in status.stdout  # where the user looks: the status text itself
    assert status.stderr.count(said) == 1  # and one warning, once
    assert "shop main@" in status.stdout
    kept_aside(world.home, "runs.sqlite")
    reindex = world.cli("reindex")
    assert_one_liners(reindex)
    assert "• shop:" in reindex.stdout and "failed" not in reindex.stdout
    assert not reindex.stderr.strip()  # the fresh log is healthy: nothing more to say
    log = RunLog(world.home / "runs.sqlite")
    last = log.last("shop")
    log.close()
    assert last is not None and last.ok and last.trigger == "cli command"


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_reindex_meeting_a_damaged_run_log_reports_the_reindex(world: World, damage: str) -> None:
    """The index was updated: the reindex says so, it does not fail on the log of it."""
    fill_runs(world.home)
    SQLITE_DAMAGE[damage](world.home / "runs.sqlite")
    reindex = world.cli("reindex")
    assert_one_liners(reindex)
    assert reindex.stdout == f"• shop: up to date at {world.shop.head()[:7]}\n"
    assert reindex.stderr.count(sentence("run log", "runs.sqlite")) == 1
    kept_aside(world.home, "runs.sqlite")
    status = world.cli("status")
    assert_one_liners(status)
    assert "last run just now (cli command" in status.stdout and "failed" not in status.stdout


# -- feedback: `codecite feedback` ---------------------------------------------------------------


def fill_feedback(home: Path) -> None:
    store = FeedbackStore(home / "feedback.sqlite")
    for n in range(120):
        answer_id = store.record_answer(
            platform="slack",
            channel="C1",
            asker="U1",
            question=f"question {n} " + "why " * 20,
            answer=Answer(f"answer {n} " + "because " * 20, (), ()),
        )
        assert store.record_vote(answer_id, "U2", 1 if n % 2 else -1)
    store.close()


@pytest.mark.parametrize("damage", DAMAGES)
def test_feedback_store(world: World, damage: str) -> None:
    fill_feedback(world.home)
    SQLITE_DAMAGE[damage](world.home / "feedback.sqlite")
    result = world.cli("feedback")
    assert_one_liners(result)
    assert "No feedback yet." in result.stdout
    assert result.stderr.count(sentence("feedback store", "feedback.sqlite")) == 1
    kept_aside(world.home, "feedback.sqlite")
    store = FeedbackStore(world.home / "feedback.sqlite")  # votes land in the fresh file
    answer_id = store.record_answer(
        platform="cli", channel="", asker="me", question="q", answer=Answer("a", (), ())
    )
    assert store.record_vote(answer_id, "me", 1)
    assert [r.vote for r in store.list()] == [1]
    store.close()


# -- event claims: the `serve --slack` start path and the claim API ------------------------------


def fill_events(home: Path) -> None:
    dedupe = EventDedupe.in_home(home)
    for n in range(400):
        assert dedupe.claim(f"Ev{n:06d}-" + "k" * 40, owner="web-1")
    dedupe.close()


@pytest.mark.parametrize("damage", DAMAGES)
def test_event_store(
    world: World, damage: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adapters.slack.app import build_bot
    from tests.servers.slack_fake import BOT_TOKEN, FakeSlack

    fill_events(world.home)
    SQLITE_DAMAGE[damage](world.home / "events.sqlite")
    with FakeSlack() as slack, caplog.at_level(logging.WARNING):
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("CODECITE_SLACK_API_URL", slack.base_url)
        core = Core.from_settings(Settings(CODECITE_HOME=world.home), FileConfig())  # type: ignore[call-arg]
        try:
            bot = build_bot(core)  # what `serve --slack` does first
            bot.listeners.shutdown()
            dedupe = EventDedupe.in_home(world.home)  # a second process on the same file
            assert dedupe.claim("EvNEW", "msg:C1:1.0")
            assert not dedupe.claim("EvNEW")
            dedupe.close()
        finally:
            core.close()
    kept_aside(world.home, "events.sqlite")
    assert warned(caplog, sentence("event store", "events.sqlite")) == 1


# -- the embedding cache: answers and ingests with an embedder -----------------------------------


@pytest.mark.parametrize("damage", DAMAGES)
def test_embedding_cache(world: World, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    from tests.servers.openai_fake import FakeOpenAI

    cache = EmbeddingCache(world.home / "embeddings.sqlite")
    cache.put_many({f"key{n}": [n / 1000] * 64 for n in range(300)})
    cache.close()
    SQLITE_DAMAGE[damage](world.home / "embeddings.sqlite")
    with FakeOpenAI() as fake, caplog.at_level(logging.WARNING):
        settings = world.settings(OPENAI_API_KEY="sk-test-damage", OPENAI_BASE_URL=fake.base_url)
        core = Core.from_settings(settings, FileConfig())
        try:
            core.index_repo(str(world.shop.path), name="shop")
            answer = core.ask("where do we retry failed webhooks?", CLI)
        finally:
            core.close()
    assert any(c.path == "shop/webhooks.py" for c in answer.citations)
    kept_aside(world.home, "embeddings.sqlite")
    assert warned(caplog, sentence("embedding cache", "embeddings.sqlite")) == 1
    with EmbeddingCache(world.home / "embeddings.sqlite") as cache:
        assert len(cache) > 0  # refilled by the ingest that met the damage


# -- the symbol table: symbol answers come back after a reindex ----------------------------------


@pytest.mark.parametrize("damage", DAMAGES)
def test_symbol_table(world: World, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    path = world.home / "index.symbols.sqlite"
    SQLITE_DAMAGE[damage](path)
    with caplog.at_level(logging.WARNING):
        core = world.core()
        try:
            meanwhile = core.ask(DEFINED, CLI)  # search answers while the table is empty
            assert any(c.path == "shop/billing.py" for c in meanwhile.citations)
            status = core.run_command("status", CLI).text
            core.index_repo(str(world.shop.path), name="shop")  # the next reindex refills it
            after = core.ask(DEFINED, CLI)
        finally:
            core.close()
    assert after.text.startswith("`charge_customer` is defined in **shop/billing.py:L")
    kept_aside(world.home, "index.symbols.sqlite")
    said = sentence("symbol table", "index.symbols.sqlite")
    assert warned(caplog, said) == 1
    assert said in status
    assert "the next reindex refills it" in status


def test_symbol_damage_found_at_query_time_is_set_aside_not_repeated(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """The table opens fine, a question meets the damaged page: set aside once, not forever."""
    path = world.home / "index.symbols.sqlite"
    core = world.core()
    try:
        assert core.ask(DEFINED, CLI).text.startswith("`charge_customer` is defined in")
        settle(path)
        with sqlite3.connect(path) as db:  # the page a definition lookup reads first
            [(page,)] = db.execute(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'defs_by_name'"
            ).fetchall()
        damage_page(path, page)
        with caplog.at_level(logging.WARNING):
            answers = [core.ask(DEFINED, CLI) for _ in range(3)]
            assert warned(caplog, sentence("symbol table", "index.symbols.sqlite")) == 1
            assert all(any(c.path == "shop/billing.py" for c in a.citations) for a in answers)
            core.index_repo(str(world.shop.path), name="shop")
            assert core.ask(DEFINED, CLI).text.startswith("`charge_customer` is defined in")
    finally:
        core.close()
    assert warned(caplog, sentence("symbol table", "index.symbols.sqlite")) == 1
    kept_aside(world.home, "index.symbols.sqlite")


# -- the Pinecone state: started afresh, rebuilt from Pinecone at the next start -----------------


def fill_pinecone_state(path: Path) -> None:
    state = PineconeState(path)
    when = datetime(2026, 11, 30, tzinfo=UTC)
    for r in range(3):
        repo = f"repo{r}"
        chunks = [
            ChunkRow(f"{repo}#f{n}.py#{n:08x}", repo, f"f{n}.py", True, tuple(range(n, n + 40)))
            for n in range(150)
        ]
        files = [
            FileRow(repo, f"f{n}.py", f"{n:040x}", "python", (chunks[n].id,), tuple(range(30)))
            for n in range(150)
        ]
        state.commit(
            RepoState(repo, f"/src/{repo}", "main", "a" * 40, when, files=150, chunks=150),
            chunks=chunks,
            deleted=(),
            files=files,
            removed_paths=(),
        )
    state.close()


@pytest.mark.parametrize("damage", DAMAGES)
def test_pinecone_state(tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "pinecone_state.sqlite"
    fill_pinecone_state(path)
    SQLITE_DAMAGE[damage](path)
    with caplog.at_level(logging.WARNING):
        state = PineconeState(path)
        try:
            for _ in range(2):  # the call that meets the damage may fail once, with a sentence
                try:
                    states = state.repo_states()
                    counts = state.counts()
                    break
                except Exception as exc:  # asserted just below
                    assert "Pinecone state" in str(exc)
            assert states == [] and counts.chunks == 0
            assert rebuild_wanted(path)  # the factory rebuilds it from Pinecone at the next start
            state.replace_all([], [], [])
            assert not rebuild_wanted(path)
        finally:
            state.close()
    kept_aside(tmp_path, "pinecone_state.sqlite")
    assert warned(caplog, sentence("Pinecone state", "pinecone_state.sqlite")) == 1


@pytest.mark.parametrize("damage", DAMAGES)
def test_pinecone_state_is_rebuilt_from_pinecone_at_start(
    world: World, damage: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end with CODECITE_INDEX=pinecone: the next start rebuilds the state and answers."""
    from bot.index.pinecone.index import STATE_FILE
    from tests.servers.openai_fake import FakeOpenAI
    from tests.servers.pinecone_fake import FakePinecone

    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _: None)
    with FakeOpenAI(dimensions=64) as openai, FakePinecone(dimension=64) as pinecone:
        settings = world.settings(
            OPENAI_API_KEY="sk-test-damage",
            OPENAI_BASE_URL=openai.base_url,
            CODECITE_EMBED_DIMENSIONS="64",
            CODECITE_INDEX="pinecone",
            PINECONE_API_KEY=pinecone.api_key,
            PINECONE_HOST=pinecone.url,
        )
        core = Core.from_settings(settings, FileConfig())
        try:
            core.index_repo(str(world.shop.path), name="shop")
            before = core.ask("where do we retry failed webhooks?", CLI)
        finally:
            core.close()
        SQLITE_DAMAGE[damage](world.home / STATE_FILE)
        with caplog.at_level(logging.WARNING):
            core = Core.from_settings(settings, FileConfig())  # the next start
            try:
                states = core.index.repo_states()
                after = core.ask("where do we retry failed webhooks?", CLI)
            finally:
                core.close()
    assert [s.name for s in states] == ["shop"]
    assert [c.label for c in after.citations] == [c.label for c in before.citations]
    kept_aside(world.home, STATE_FILE)
    assert not rebuild_wanted(world.home / STATE_FILE)
    assert warned(caplog, sentence("Pinecone state", STATE_FILE)) == 1


# -- the Discord command list: commands are registered again ------------------------------------


@pytest.mark.parametrize("damage", DAMAGES)
def test_discord_command_list(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    from adapters.discord.sync import STATE_FILE, CommandSync

    sync = CommandSync(tmp_path)
    sync.save(42, {f"guild:{n}": f"{n:064x}" for n in range(100)})
    assert len(sync.load(42)) == 100
    TEXT_DAMAGE[damage](tmp_path / STATE_FILE)
    with caplog.at_level(logging.WARNING):
        assert sync.load(42) == {}  # every target is synced again
        sync.save(42, {"global": "f" * 64})
        assert sync.load(42) == {"global": "f" * 64}
    kept_aside(tmp_path, STATE_FILE)
    assert warned(caplog, sentence("Discord command list", STATE_FILE)) == 1


# -- the shared record of what was set aside -----------------------------------------------------


def test_every_set_aside_is_remembered_for_status(world: World) -> None:
    before = len(notices())
    SQLITE_DAMAGE["garbled"](world.home / "feedback.sqlite")
    core = world.core()
    try:
        text = core.run_command("status", CLI).text
    finally:
        core.close()
    assert len(notices()) == before + 1
    assert notices()[-1].sentence() in text


def test_status_mentions_a_file_another_process_set_aside(world: World) -> None:
    """The scheduler (or a terminal) set the file aside; the chat's status still says so."""
    fill_feedback(world.home)
    SQLITE_DAMAGE["damaged-page"](world.home / "feedback.sqlite")
    assert_one_liners(world.cli("feedback"))  # another process meets the damage
    [kept] = world.home.glob("feedback.sqlite.damaged-*")
    core = world.core()
    try:
        text = core.run_command("status", CLI).text
    finally:
        core.close()
    said = f"The feedback store was damaged and has been started afresh (kept as {kept.name})."
    assert text.count(said) == 1
    old = kept.with_name("runs.sqlite.damaged-20200101T000000.000000Z")
    old.write_bytes(b"")  # set aside long ago: no longer news
    core = world.core()
    try:
        assert old.name not in core.run_command("status", CLI).text
    finally:
        core.close()
