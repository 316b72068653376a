"""The stores of one data directory (bot/store/local.py): the files they keep, opened only
when used, and a damaged file of every part set aside with one notice."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.models import Answer, RepoState
from bot.store import StoreSet, open_store
from bot.store.records import Run
from bot.store.sqlite import notices
from bot.symbols.model import Definition, FileSymbols
from tests.support.damage import GARBAGE

WHEN = datetime(2026, 12, 1, tzinfo=UTC)
DISCORD = ("discord-commands", "Discord command list")


@dataclass(frozen=True)
class Part:
    """One part of the stores: its file, its name in sentences, and how to fill and read it."""

    file: str
    what: str
    fill: Callable[[StoreSet], None]
    count: Callable[[StoreSet], int]  # how many records it holds


def _fill_runs(s: StoreSet) -> None:
    for n in range(20):
        s.runs.record(Run(f"repo{n % 3}", WHEN, 1.0, "schedule"))


def _fill_feedback(s: StoreSet) -> None:
    for n in range(20):
        answer_id = s.feedback.record_answer(
            platform="slack", channel="C", asker="U", question=f"q{n}", answer=Answer("a", (), ())
        )
        s.feedback.record_vote(answer_id, "U2", 1)


def _fill_claims(s: StoreSet) -> None:
    for n in range(20):
        s.claims.claim(f"event{n}", ttl=600)


def _claims_held(s: StoreSet) -> int:
    return sum(not s.claims.claim(f"event{n}", ttl=600) for n in range(20))


def _fill_symbols(s: StoreSet) -> None:
    defs = (Definition("charge", "charge", "function", 1, 3),)
    s.symbols.apply("api", [(f"f{n}.py", f"b{n}", FileSymbols(defs)) for n in range(20)])


def _fill_state(s: StoreSet) -> None:
    s.pinecone_state.commit(
        RepoState("api", "/src/api", "main", "a" * 40, WHEN),
        chunks=(),
        deleted=(),
        files=(),
        removed_paths=(),
    )


PARTS = {
    "runs": Part(
        "runs.sqlite", "run log", _fill_runs, lambda s: int(s.runs.last("repo0") is not None)
    ),
    "feedback": Part(
        "feedback.sqlite", "feedback store", _fill_feedback, lambda s: len(s.feedback.list())
    ),
    "claims": Part("events.sqlite", "event store", _fill_claims, _claims_held),
    "symbols": Part(
        "symbols.sqlite", "symbol table", _fill_symbols, lambda s: len(s.symbols.blobs("api"))
    ),
    "embedding_cache": Part(
        "embeddings.sqlite",
        "embedding cache",
        lambda s: s.embedding_cache.put_many({f"k{n}": [n / 3] * 8 for n in range(20)}),
        lambda s: len(s.embedding_cache),
    ),
    "pinecone_state": Part(
        "pinecone_state.sqlite",
        "Pinecone state",
        _fill_state,
        lambda s: len(s.pinecone_state.repo_states()),
    ),
    "command_hashes": Part(
        "discord-commands.json",
        "Discord command list",
        lambda s: s.command_hashes(*DISCORD).set("42", {"global": "f" * 64}),
        lambda s: len(s.command_hashes(*DISCORD).get("42")),
    ),
}


def test_opening_the_stores_creates_no_file_until_a_part_is_used(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stores = open_store(home)
    assert not home.exists()
    _fill_runs(stores)
    assert sorted(p.name for p in home.iterdir() if not p.name.startswith(".")) == [
        "runs.sqlite",
        "runs.sqlite-shm",
        "runs.sqlite-wal",
    ]
    stores.close()


@pytest.mark.parametrize("name", sorted(PARTS))
def test_each_part_keeps_the_file_earlier_versions_kept(tmp_path: Path, name: str) -> None:
    part = PARTS[name]
    stores = open_store(tmp_path)
    part.fill(stores)
    assert part.count(stores) > 0
    stores.close()
    assert (tmp_path / part.file).is_file()
    reopened = open_store(tmp_path)
    assert part.count(reopened) > 0  # what was written is there for the next process
    reopened.close()


@pytest.mark.parametrize("name", sorted(PARTS))
def test_a_garbled_file_of_every_part_is_set_aside_and_started_afresh(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    part = PARTS[name]
    stores = open_store(tmp_path)
    part.fill(stores)
    stores.close()
    (tmp_path / part.file).write_bytes(GARBAGE)
    with caplog.at_level(logging.WARNING):
        reopened = open_store(tmp_path)
        try:
            assert part.count(reopened) == 0  # a working, empty store
            part.fill(reopened)  # which takes writes
            assert part.count(reopened) > 0
        finally:
            reopened.close()
    [kept] = tmp_path.glob(f"{part.file}.damaged-*")
    assert kept.read_bytes() == GARBAGE  # the original bytes, kept for whoever looks
    [notice] = [n for n in notices([tmp_path]) if n.path.name == part.file]
    assert notice.kept == kept and notice.sentence().startswith(
        f"The {part.what} was damaged and has been started afresh (kept as {kept.name}"
    )
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said.count(notice.sentence()) == 1


def test_a_garbled_pinecone_state_asks_to_be_rebuilt(tmp_path: Path) -> None:
    stores = open_store(tmp_path)
    _fill_state(stores)
    stores.close()
    (tmp_path / "pinecone_state.sqlite").write_bytes(GARBAGE)
    reopened = open_store(tmp_path)
    assert reopened.pinecone_state.rebuild_wanted()
    reopened.pinecone_state.replace_all([], [], [])
    assert not reopened.pinecone_state.rebuild_wanted()
    reopened.close()


def test_garbage_in_a_lock_file_does_not_stop_the_lock(tmp_path: Path) -> None:
    stores = open_store(tmp_path)
    with stores.locks.hold("api"):
        pass
    [lock] = (tmp_path / "locks").iterdir()
    lock.write_bytes(GARBAGE)
    with stores.locks.hold("api", wait=0):
        assert stores.locks.busy("api")
    assert not stores.locks.busy("api")
    stores.close()


def test_the_symbol_table_can_live_beside_a_local_index(tmp_path: Path) -> None:
    stores = open_store(tmp_path, symbols_path=tmp_path / "index.symbols.sqlite")
    _fill_symbols(stores)
    stores.close()
    assert (tmp_path / "index.symbols.sqlite").is_file()
    assert not (tmp_path / "symbols.sqlite").exists()


def test_ping_fails_with_a_sentence_while_the_data_directory_is_gone(tmp_path: Path) -> None:
    from bot.errors import StoreError

    home = tmp_path / "home"
    stores = open_store(home)
    try:
        stores.runs.last("api")
        stores.ping()
        home.rename(tmp_path / "elsewhere")
        with pytest.raises(StoreError) as gone:
            stores.ping()
        assert gone.value.user_message == "The data directory is missing."
        assert str(home) not in gone.value.user_message
        (tmp_path / "elsewhere").rename(home)
        stores.ping()
    finally:
        stores.close()
