"""The storage contract (bot/store/base.py), asserted through `StoreSet` only, so every
implementation in tests/support/stores.KINDS passes the same tests."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from bot.errors import BotError, StoreError
from bot.models import Answer, Citation, RepoState
from bot.store import StoreSet
from bot.store.records import DONE, INTERRUPTED, RUNNING, ChunkRow, FileRow, Run
from bot.symbols.extract import extract_text
from bot.symbols.links import BARE, OTHER, QUALIFIED, SELF
from bot.symbols.model import Definition, FileSymbols, Reference

START = datetime(2026, 12, 1, 9, tzinfo=UTC)


# -- the run log -------------------------------------------------------------------------------


def test_forgetting_a_repository_drops_its_runs_and_next_run_only(
    stores: StoreSet, other: StoreSet
) -> None:
    runs = stores.runs
    for name in ("api", "api", "web"):
        runs.record(Run(name, START, 1.0, "cli", embedding_tokens=3))
        runs.set_next_run(name, START + timedelta(hours=1))
    assert other.runs.forget("api") == 2
    assert runs.last("api") is None and runs.next_run("api") is None
    assert runs.embedding_totals("api") == (0, 0)
    assert runs.last("web") is not None and runs.next_run("web") == START + timedelta(hours=1)
    assert other.runs.forget("api") == 0  # again: nothing left, no error


def test_a_run_is_recorded_at_its_start_and_completed_at_its_end(stores: StoreSet) -> None:
    runs = stores.runs
    run_id = runs.begin("api", START, "schedule")
    assert run_id is not None
    running = runs.last("api")
    assert running is not None and running.state == RUNNING and not running.ok
    runs.finish(run_id, Run("api", START, 2.5, "schedule", commit="abc", embedding_tokens=7))
    done = runs.last("api")
    assert done is not None and done.ok and done.state == DONE and done.commit == "abc"
    assert runs.last("web") is None


def test_a_run_left_running_is_marked_interrupted_by_the_next(
    stores: StoreSet, other: StoreSet
) -> None:
    stores.runs.begin("api", START, "schedule")  # its process dies: never finished
    second = other.runs.begin("api", START + timedelta(minutes=5), "command")
    other.runs.finish(second, Run.failed("api", START, 1.0, "command", StoreError("broken")))
    last = stores.runs.last("api")
    assert last is not None and last.error == "broken" and not last.ok
    assert stores.runs.last_ok("api") is None


def test_a_run_keeps_what_it_left_out_for_secrets(stores: StoreSet) -> None:
    """Files skipped for secrets, key blocks cut and secrets redacted: what `status` shows."""
    stores.runs.record(Run("api", START, 1.0, "cli", secret_files=2, key_blocks=1, redactions=5))
    last = stores.runs.last("api")
    assert last is not None
    assert (last.secret_files, last.key_blocks, last.redactions) == (2, 1, 5)


def test_last_ok_embedding_totals_and_next_run(stores: StoreSet) -> None:
    runs = stores.runs
    runs.record(Run("api", START, 1.0, "cli", embedding_tokens=10, embedding_tokens_saved=4))
    runs.record(Run("api", START, 1.0, "cli", error="Could not reach the remote."))
    runs.record(Run("api", START, 1.0, "cli", state=INTERRUPTED))
    ok = runs.last_ok("api")
    assert ok is not None and ok.embedding_tokens == 10
    assert runs.embedding_totals("api") == (10, 4)
    assert runs.embedding_totals("web") == (0, 0)
    assert runs.next_run("api") is None
    runs.set_next_run("api", START + timedelta(hours=1))
    assert runs.next_run("api") == START + timedelta(hours=1)
    runs.set_next_run("api", None)
    assert runs.next_run("api") is None


# -- feedback and answers on record ------------------------------------------------------------


def test_answers_on_record_take_one_vote_per_voter(stores: StoreSet, other: StoreSet) -> None:
    cite = Citation("api", "src/app.py", 3, 9, "https://example.com/app.py#L3-L9")
    answer_id = stores.feedback.record_answer(
        platform="slack",
        channel="C1",
        asker="U1",
        question="why?",
        answer=Answer("so", (cite,), ()),
    )
    assert other.feedback.record_vote(answer_id, "U2", 1)  # another process, same records
    assert other.feedback.record_vote(answer_id, "U2", -1)  # changed, not added
    assert not stores.feedback.record_vote("no-such-answer", "U2", 1)
    with pytest.raises(ValueError):
        stores.feedback.record_vote(answer_id, "U3", 2)
    [row] = stores.feedback.list()
    assert (row.answer_id, row.voter, row.vote) == (answer_id, "U2", -1)
    assert row.question == "why?" and row.citations == (cite.label,)


# -- event claims ------------------------------------------------------------------------------


def test_a_claim_is_granted_once(stores: StoreSet, other: StoreSet) -> None:
    assert stores.claims.claim("slack:event:E1", ttl=60, owner="web-1")
    assert not stores.claims.claim("slack:event:E1", ttl=60)
    assert not other.claims.claim("slack:event:E1", ttl=60, owner="web-2")  # another process
    assert other.claims.claim("slack:event:E2", ttl=60)


def test_a_claim_takes_every_key_or_none(stores: StoreSet) -> None:
    assert stores.claims.claim("msg:C:1", "event:E1", ttl=60)
    assert not stores.claims.claim("msg:C:1", "event:E2", ttl=60)  # same message, other event
    assert stores.claims.claim("event:E2", ttl=60)  # the refused claim kept nothing
    with pytest.raises(ValueError):
        stores.claims.claim("", ttl=60)
    with pytest.raises(ValueError):
        stores.claims.claim("k", ttl=0)


def test_a_claim_expires_after_its_ttl(stores: StoreSet) -> None:
    assert stores.claims.claim("short", ttl=0.05)
    assert stores.claims.claim("long", ttl=600)
    time.sleep(0.2)
    assert stores.claims.claim("short", ttl=600)  # expired: claimable again
    assert not stores.claims.claim("long", ttl=600)


def test_threads_racing_for_claims_win_each_key_once(stores: StoreSet, other: StoreSet) -> None:
    keys = [f"k{n}" for n in range(40)]
    won: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def race(part: StoreSet) -> None:
        start.wait()
        for key in keys:
            if part.claims.claim(key, ttl=60):
                with lock:
                    won.append(key)

    threads = [threading.Thread(target=race, args=(s,)) for s in (stores, other) * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == sorted(keys)


# -- the embedding cache -----------------------------------------------------------------------


def test_vectors_come_back_as_stored(stores: StoreSet, other: StoreSet) -> None:
    cache = stores.embedding_cache
    cache.put_many({"a": [0.5, -1.0, 2.0], "b": [0.25] * 8})
    cache.put_many({"a": [1.0, 1.0]})  # an existing key is overwritten
    found = other.embedding_cache.get_many(["a", "b", "missing", "a"])
    assert found == {"a": [1.0, 1.0], "b": [0.25] * 8}
    assert len(other.embedding_cache) == 2
    assert cache.get_many([]) == {}


def test_put_many_is_one_transaction(stores: StoreSet, other: StoreSet) -> None:
    """A reader (another process's view) sees none of a batch or all of it, never part."""
    batch = {f"key{n}": [n / 7.0] * 16 for n in range(20_000)}
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.add(len(other.embedding_cache))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        time.sleep(0.05)
        stores.embedding_cache.put_many(batch)
        time.sleep(0.05)
    finally:
        done.set()
        watcher.join()
    seen.add(len(other.embedding_cache))
    assert seen <= {0, len(batch)} and len(batch) in seen, sorted(seen)[:10]


# -- command-registration hashes ---------------------------------------------------------------


def test_command_hashes_per_application(stores: StoreSet, other: StoreSet) -> None:
    hashes = stores.command_hashes("discord-commands", "Discord command list")
    assert hashes.get("42") == {}
    hashes.set("42", {"global": "a" * 64, "guild:7": "b" * 64})
    mine = other.command_hashes("discord-commands", "Discord command list")
    assert mine.get("42") == {"global": "a" * 64, "guild:7": "b" * 64}
    assert mine.get("43") == {}  # another bot: everything is registered afresh
    mine.set("42", {"global": "c" * 64})  # replaced whole
    assert hashes.get("42") == {"global": "c" * 64}
    assert stores.command_hashes("other-commands").get("42") == {}  # names are apart


# -- the symbol table --------------------------------------------------------------------------


def symbols(*names: str, calls: tuple[str, ...] = ()) -> FileSymbols:
    defs = tuple(Definition(n, n, "function", 1 + 3 * i, 2 + 3 * i) for i, n in enumerate(names))
    refs = tuple(Reference(c, 20 + i, names[0] if names else "", True) for i, c in enumerate(calls))
    return FileSymbols(defs, refs)


def test_symbols_are_applied_and_found_per_repository(stores: StoreSet, other: StoreSet) -> None:
    table = stores.symbols
    table.apply("api", [("a.py", "blob1", symbols("charge", "refund"))], commit="c1")
    table.apply("web", [("b.py", "blob2", symbols("render", calls=("charge",)))], commit="c2")
    seen = other.symbols  # another process
    assert seen.commits() == {"api": "c1", "web": "c2"}
    assert seen.blobs("api") == {"a.py": "blob1"}
    assert [(d.repo, d.path, d.start_line) for d in seen.definitions("charge", repos=None)] == [
        ("api", "a.py", 1)
    ]
    assert seen.definitions("charge", repos=frozenset({"web"})) == []
    assert [(r.repo, r.path) for r in seen.references("charge", repos=None)] == [("web", "b.py")]
    assert seen.reference_count("charge", repos=None, calls_only=True) == 1
    assert seen.repos() == ["api", "web"]
    table.apply("api", [], removed=["a.py"], commit="c3")
    assert seen.definitions("charge", repos=None) == [] and seen.commits()["api"] == "c3"
    table.remove_repo("web")
    assert seen.repos() == [] and "web" not in seen.commits()


LINKED = """from .base import Base
import werkzeug.utils


class App(Base):
    def run(self):
        self.send()
        send()
        werkzeug.utils.send()
        self.app.send()
"""


def test_forms_and_links_come_back_as_extracted(stores: StoreSet, other: StoreSet) -> None:
    """How each call was written, and each file's imports, bases and receivers, are kept
    with its rows, and read back alike by every store."""
    packed = extract_text("pkg/app.py", LINKED, "python")
    stores.symbols.apply("api", [("pkg/app.py", "b1", packed), ("pkg/base.py", "b2", symbols())])
    seen = other.symbols
    sites = seen.references("send", repos=None, calls_only=True)
    assert [(r.line, r.caller, r.form) for r in sites] == [
        (7, "App.run", SELF),
        (8, "App.run", BARE),
        (9, "App.run", QUALIFIED),
        (10, "App.run", OTHER),
    ]
    facts = seen.file_facts("api", ["pkg/app.py", "pkg/base.py", "pkg/missing.py"])
    assert sorted(facts) == ["pkg/app.py", "pkg/base.py"]
    app = facts["pkg/app.py"]
    assert app.links == packed.file_links and app.links.bases_of("App") == ("Base",)
    assert [d.symbol for d in app.definitions] == ["App", "App.run"]
    assert facts["pkg/base.py"].links.imports == ()
    assert sorted(seen.paths("api")) == ["pkg/app.py", "pkg/base.py"] and seen.paths("x") == []
    assert seen.file_facts("web", ["pkg/app.py"]) == {}


def test_one_apply_is_one_transaction(stores: StoreSet, other: StoreSet) -> None:
    files = [(f"f{n}.py", f"blob{n}", symbols(f"fn{n}")) for n in range(3000)]
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.add(len(other.symbols.blobs("api")))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        time.sleep(0.05)
        stores.symbols.apply("api", files, commit="c1")
        time.sleep(0.05)
    finally:
        done.set()
        watcher.join()
    seen.add(len(other.symbols.blobs("api")))
    assert seen <= {0, len(files)} and len(files) in seen, sorted(seen)[:10]


# -- Pinecone's repository state ---------------------------------------------------------------


def test_pinecone_state_commits_a_change_set_whole(stores: StoreSet, other: StoreSet) -> None:
    state = stores.pinecone_state
    chunks = [ChunkRow(f"api#f{n}.py#{n:08x}", "api", f"f{n}.py", True, (n, 100)) for n in range(5)]
    files = [
        FileRow("api", c.path, f"{n:040x}", "python", (c.id,), (n,)) for n, c in enumerate(chunks)
    ]
    state.journal("api", [c.id for c in chunks])
    assert sorted(other.pinecone_state.pending("api")) == sorted(c.id for c in chunks)
    repo = RepoState("api", "/src/api", "main", "a" * 40, START, files=5, chunks=5)
    state.commit(repo, chunks=chunks, deleted=(), files=files, removed_paths=())
    seen = other.pinecone_state
    assert seen.repo_states() == [repo] and seen.pending("api") == []
    assert sorted(seen.manifest("api")) == [f"f{n}.py" for n in range(5)]
    assert seen.file_chunk_ids("api", "f0.py") == [chunks[0].id]
    stats = seen.corpus_stats("chunk", [100, 3, 999], None)
    assert (stats.documents, dict(stats.df)) == (5, {100: 5, 3: 1})
    assert seen.counts().vectors == 5 and seen.record_count() == 5 + 5 + 1
    state.commit(repo, chunks=(), deleted=[chunks[0].id], files=(), removed_paths=["f0.py"])
    assert seen.corpus_stats("chunk", [100], frozenset({"api"})).df == {100: 4}
    assert seen.corpus_stats("chunk", [100], frozenset({"web"})).documents == 0
    state.replace_all([], [], [])
    assert seen.repo_states() == [] and not seen.rebuild_wanted()
    state.commit(repo, chunks=chunks[:1], deleted=(), files=files[:1], removed_paths=())
    state.remove_repo("api")
    assert seen.counts().chunks == 0 and seen.manifest("api") == {}


def test_pinecone_state_hides_a_repository_before_its_rows_go(
    stores: StoreSet, other: StoreSet
) -> None:
    """`forget` on Pinecone: listed no more at once; its ids stay findable until the end."""
    state = stores.pinecone_state
    for name in ("api", "web"):
        chunk = ChunkRow(f"{name}#a.py#00000001", name, "a.py", True, (1,))
        row = FileRow(name, "a.py", "b" * 40, "python", (chunk.id,), (1,))
        repo = RepoState(name, f"/src/{name}", "main", "a" * 40, START, files=1, chunks=1)
        state.commit(repo, chunks=[chunk], deleted=(), files=[row], removed_paths=())
    state.journal("api", ["api#stray"])
    state.hide_repo("api")
    seen = other.pinecone_state
    assert [s.name for s in seen.repo_states()] == ["web"]
    assert list(seen.manifest("api")) == ["a.py"] and seen.pending("api") == ["api#stray"]
    assert list(seen.repo_chunks("api")) == ["api#a.py#00000001"]
    state.remove_repo("api")
    assert seen.manifest("api") == {} and seen.pending("api") == [] and not seen.repo_chunks("api")
    assert [s.name for s in seen.repo_states()] == ["web"] and seen.manifest("web")


# -- closing -----------------------------------------------------------------------------------


def test_close_is_idempotent_for_every_part_and_the_whole(stores: StoreSet) -> None:
    parts = [
        stores.runs,
        stores.feedback,
        stores.claims,
        stores.locks,
        stores.symbols,
        stores.embedding_cache,
        stores.pinecone_state,
        stores.command_hashes("discord-commands"),
    ]
    for part in parts:
        part.close()
        part.close()
    stores.close()
    stores.close()
    with pytest.raises(BotError):
        stores.runs.last("api")  # closed stores are not reopened behind the owner's back


def test_ping_answers_on_working_stores(stores: StoreSet) -> None:
    stores.runs.last("api")  # a store in use (the data directory exists from here on)
    assert stores.ping() is None
