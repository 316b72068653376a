"""Ingest in worker processes writes exactly what one process writes, and fails cleanly.

The thresholds that keep small change sets in one process are lowered here, so
a small real repository is spread over a worker; worker log records reach the
test's loggers, which is how a test sees where each batch ran.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

import pytest

from bench.index_dump import table_digests
from bot.config import FileConfig, Settings
from bot.core import Core
from bot.errors import BotError
from bot.ingest import prepare, workers
from bot.ingest.workers import WorkerFailed, process_count
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop

SOURCES = Path(__file__).resolve().parents[3] / "bot"
# A fake key of a shape the scrubber knows, so redaction runs in the workers too.
SECRET = 'STRIPE_KEY = "sk_live_' + "4eC39HqLyjWDarjtT1zdp7dc" + '"\n'


def _real_repo(repo: GitRepo) -> None:
    """The shop, then this project's own ingest and index code, a secret and odd bytes."""
    build_shop(repo)
    for sub in ("ingest", "index/local", "text", "symbols"):
        for path in sorted((SOURCES / sub).glob("*.py")):
            repo.write(f"core/{sub}/{path.name}", path.read_text(encoding="utf-8"))
    repo.write("config/settings.py", SECRET + "TIMEOUT = 30\n")
    repo.write("docs/notes.md", "# Notes\n\nUse `--setup-show` to see fixtures.\n" * 40)
    repo.write("legacy/latin1.py", "# caf\xe9\nNAME = 'd\xe9j\xe0'\n".encode("latin-1"))
    repo.commit("the whole tree")


def _index(home: Path, repo: GitRepo, processes: int, monkeypatch: pytest.MonkeyPatch) -> Core:
    monkeypatch.setenv("CODECITE_HOME", str(home))
    monkeypatch.setenv("CODECITE_INGEST_WORKERS", str(processes))
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="shop")
    return core


def _spread_small_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "PARALLEL_ABOVE_CHARS", 0)
    monkeypatch.setattr(workers, "BATCH_CHARS", 8_000)


def _preparing_pids(caplog: pytest.LogCaptureFixture) -> set[int]:
    return {r.process for r in caplog.records if r.name == prepare.__name__ and r.process}


def test_workers_write_the_same_index_as_one_process(make_repo, tmp_path, monkeypatch, caplog):
    repo = make_repo("shop")
    _real_repo(repo)
    _spread_small_inputs(monkeypatch)
    caplog.set_level(logging.DEBUG)  # workers log at the root's level

    _index(tmp_path / "one", repo, 1, monkeypatch).close()
    assert _preparing_pids(caplog) == {os.getpid()}
    caplog.clear()
    _index(tmp_path / "two", repo, 2, monkeypatch).close()

    pids = _preparing_pids(caplog)
    assert os.getpid() in pids and len(pids) == 2  # this process and one worker both worked
    one, two = table_digests(tmp_path / "one"), table_digests(tmp_path / "two")
    assert one["index.sqlite/chunks"][0] > 100
    assert one == two


def test_a_small_change_is_prepared_without_workers(make_repo, tmp_path, monkeypatch, caplog):
    repo = make_repo("shop")
    _real_repo(repo)
    core = _index(tmp_path / "home", repo, 2, monkeypatch)
    repo.write("shop/extra.py", "def extra():\n    return 1\n")
    repo.commit("one more file")
    caplog.set_level(logging.DEBUG)  # workers log at the root's level

    report = core.index_repo(str(repo.path), name="shop")
    core.close()
    assert report.files_added == 1
    assert _preparing_pids(caplog) == {os.getpid()}


def die_in_a_worker(like: prepare.Batch, jobs: list[prepare.FileJob]) -> list[prepare.PreparedFile]:
    """A worker that dies as a parser crash would take it down (no exception, no reply)."""
    if str(os.getpid()) != os.environ["TEST_INGEST_PARENT"]:
        os._exit(3)
    return prepare.prepare_batch(replace(like, files=jobs))


def test_a_dead_worker_stops_the_ingest_and_loses_nothing(make_repo, tmp_path, monkeypatch):
    repo = make_repo("shop")
    _real_repo(repo)
    core = _index(tmp_path / "home", repo, 1, monkeypatch)
    core.close()
    before = table_digests(tmp_path / "home")
    for n in range(30):
        repo.write(f"more/module_{n}.py", f"def handler_{n}(event):\n    return event * {n}\n" * 20)
    repo.commit("more modules")
    _spread_small_inputs(monkeypatch)
    monkeypatch.setattr(workers, "_prepare_jobs", die_in_a_worker)
    monkeypatch.setenv("TEST_INGEST_PARENT", str(os.getpid()))

    with pytest.raises(WorkerFailed) as failed:
        _index(tmp_path / "home", repo, 2, monkeypatch)
    assert isinstance(failed.value, BotError)
    assert "\n" not in failed.value.user_message
    assert "previous index is unchanged" in failed.value.user_message
    after = table_digests(tmp_path / "home")
    assert after == before


def test_process_count_follows_the_setting_and_the_cores():
    assert process_count(1) == 1
    assert process_count(3) == 3
    assert process_count(None) == workers.available_cores()


@pytest.mark.parametrize("value", ["0", "65", "two"])
def test_a_bad_worker_setting_names_the_valid_range(monkeypatch, value):
    monkeypatch.setenv("CODECITE_INGEST_WORKERS", value)
    from bot.config import load_settings

    with pytest.raises(BotError) as bad:
        load_settings()
    assert "CODECITE_INGEST_WORKERS" in bad.value.user_message
    assert "1..64" in bad.value.user_message
