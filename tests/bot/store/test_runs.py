import sqlite3
from datetime import UTC, datetime

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.errors import StoreError
from bot.llm.pricing import describe_cost, embedding_cost
from bot.store.runs import INTERRUPTED, RUNNING, Run, RunLog
from tests.support.shop import build_shop


def test_record_last_totals_and_next_run(tmp_path):
    log = RunLog(tmp_path / "runs.sqlite")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    log.record(Run("a", at, 1.5, "schedule", "abc", 1, 2, 3, 4, 5, 6, 700, "", 300))
    log.record(Run("a", at, 0.5, "cli", error="Could not reach github.com."))
    last = log.last("a")
    assert last is not None and not last.ok and last.error.startswith("Could not reach")
    assert log.embedding_totals("a") == (700, 300)
    assert log.last("b") is None
    log.set_next_run("a", at)
    assert log.next_run("a") == at
    log.set_next_run("a", None)
    assert log.next_run("a") is None


def test_a_run_is_logged_when_it_begins_and_completed_when_it_ends(tmp_path):
    log = RunLog(tmp_path / "runs.sqlite")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    first = log.begin("a", at, "schedule")
    running = log.last("a")
    assert running is not None and running.state == RUNNING and not running.ok
    log.finish(first, Run("a", at, 2.0, "schedule", "abc", files_added=3))
    done = log.last("a")
    assert done is not None and done.ok and done.files_added == 3 and done.commit == "abc"

    killed = log.begin("a", at, "cli")  # its process dies: it is never finished
    assert log.last("a").state == RUNNING and log.last_ok("a") == done
    log.begin("a", at, "webhook")  # the next run (under the lock) knows the last one died
    rows = sqlite3.connect(tmp_path / "runs.sqlite").execute(
        "SELECT id, state FROM runs ORDER BY id"
    )
    assert dict(rows.fetchall())[killed] == INTERRUPTED
    log.close()


def test_old_logs_gain_the_new_column(tmp_path):
    path = tmp_path / "runs.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, repo TEXT NOT NULL, started_at TEXT NOT NULL, "
        "seconds REAL NOT NULL, trigger TEXT NOT NULL, commit_sha TEXT NOT NULL, "
        "files_added INTEGER NOT NULL, files_changed INTEGER NOT NULL, files_removed INTEGER NOT NULL, "
        "chunks_added INTEGER NOT NULL, chunks_removed INTEGER NOT NULL, "
        "embedded_inputs INTEGER NOT NULL, embedding_tokens INTEGER NOT NULL, error TEXT NOT NULL)"
    )
    db.commit()
    db.close()
    log = RunLog(path)
    log.record(
        Run("a", datetime.now(UTC), 1.0, "cli", embedding_tokens=5, embedding_tokens_saved=2)
    )
    assert log.embedding_totals("a") == (5, 2)


def test_a_damaged_log_is_set_aside_and_started_afresh(tmp_path):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    log = RunLog(path)
    assert log.last("a") is None
    kept = list(tmp_path.glob("runs.sqlite.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"not a database")


def test_an_unwritable_home_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError):
        RunLog(blocker / "runs.sqlite")


def test_embedding_cost():
    assert embedding_cost("text-embedding-3-small", 1_000_000) == pytest.approx(0.02)
    assert embedding_cost("nomic-embed-text", 10) is None
    assert describe_cost("text-embedding-3-large", 2_000_000) == "≈$0.2600"
    assert describe_cost("local", 5) == "price unknown"


def test_status_tells_a_live_run_from_an_interrupted_one(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="shop")
    core.runs.begin("shop", datetime.now(UTC), "schedule")  # a run nobody finishes
    with core.stores.locks.hold("shop"):  # ... while its process holds the lock
        status = core.run_command("status", CLI).text
        assert "running now" in status and "interrupted" not in status
    status = core.run_command("status", CLI).text  # the lock is gone: the process died
    assert "interrupted before it finished" in status
    assert "last successful run" in status
    core.close()
