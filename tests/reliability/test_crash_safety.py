"""A process killed mid-ingest leaves the previous state answering; the next run converges."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.index.local.index import LocalIndex
from bot.wiring import symbols_path
from tests.servers.openai_fake import FakeOpenAI
from tests.support.cli import run_cli
from tests.support.paths import ROOT
from tests.support.shop import build_shop


def test_sigkill_during_ingest(make_repo, tmp_path):
    repo = make_repo("shop")
    build_shop(repo)
    with FakeOpenAI() as fake:
        env = {
            **os.environ,
            "CODECITE_HOME": str(tmp_path / "home"),
            "OPENAI_API_KEY": "sk-test-abcdef",
            "OPENAI_BASE_URL": fake.base_url,
        }
        first = subprocess.run(
            [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert first.returncode == 0, first.stderr
        old_commit = repo.head()
        for i in range(40):
            repo.write(f"shop/gen/module_{i}.py", f"def generated_feature_{i}():\n    return {i}\n")
        repo.commit("many new files")

        fake.delay_next(60)  # the embedding call hangs: the process is mid-ingest
        seen = len(fake.requests)
        proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(fake.requests) == seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(fake.requests) > seen, "the ingest never reached the embedding step"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)

        core = Core.from_settings(Settings(), FileConfig())  # conftest points CODECITE_HOME there
        state = core.index.repo_states()[0]
        assert state.commit == old_commit
        assert not any(
            h.chunk.path.startswith("shop/gen/")
            for h in core.search("generated_feature_3", CLI, top_k=20)
        )
        assert (
            core.search("retry failed webhooks", CLI, top_k=1)[0].chunk.path == "shop/webhooks.py"
        )
        core.close()

        again = subprocess.run(
            [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
    core = Core.from_settings(Settings(), FileConfig())
    assert core.index.repo_states()[0].commit == repo.head()
    assert core.search("generated_feature_3", CLI, top_k=1)[0].chunk.path == "shop/gen/module_3.py"
    core.close()


REFINE_OLD = (
    "def refine_atan2(expr):\n"
    '    """Refine atan2 under assumptions."""\n'
    "    return expr\n"
    "\n"
    "\n"
    "def refine_exp(expr):\n"
    "    return expr * 2\n"
)
# At the next commit the two swap places: the old lines of refine_atan2 hold refine_exp.
REFINE_NEW = (
    "def refine_exp(expr):\n"
    "    return expr * 2\n"
    "\n"
    "\n"
    "def refine_atan2(expr):\n"
    '    """Refine atan2 under assumptions."""\n'
    "    return expr\n"
)
WHERE = "where is refine_atan2 defined?"


def test_killed_between_index_and_symbol_table_never_cites_the_old_lines(make_repo, tmp_path):
    """The issue's case: the index committed the new commit, the process died before the
    symbol table did. The table's rows (of the old commit) must not be used, status must
    say so and show the interrupted run, and the next ingest must mend the table."""
    home = tmp_path / "home"
    env = {**os.environ, "CODECITE_HOME": str(home)}
    repo = make_repo("sym")
    repo.write("refine.py", REFINE_OLD)
    repo.commit("refine")
    first = run_cli(home, "index", str(repo.path))
    assert first.returncode == 0, first.stderr
    old_commit = repo.head()
    repo.write("refine.py", REFINE_NEW)
    repo.commit("reorder")

    # Hold the symbol table's write lock, so the ingest stops exactly between the index's
    # commit and the table's; then kill it there.
    blocker = sqlite3.connect(symbols_path(Settings()), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        commit = old_commit
        while commit == old_commit and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            probe = LocalIndex(home / "index.sqlite")
            commit = probe.repo_states()[0].commit
            probe.close()
        assert commit == repo.head(), "the ingest never committed the index"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        blocker.rollback()
        blocker.close()

    core = Core.from_settings(Settings(), FileConfig())
    assert core.index.repo_states()[0].commit == repo.head()
    assert core.symbols is not None and core.symbols.commits()["sym"] == old_commit
    answer = core.ask(WHERE, CLI)
    assert "refine.py:L1-L3" not in answer.text  # the old lines: refine_exp's now
    cited = {(c.path, c.start_line) for c in answer.citations}
    assert ("refine.py", 1) not in cited or "refine_exp" in answer.text
    status = core.run_command("status", CLI).text
    assert "interrupted before it finished" in status
    assert "symbol table: behind the index" in status
    core.close()

    # The scheduler's quick check notices the table is behind and mends it.
    core = Core.from_settings(Settings(), FileConfig())
    report = core.index_repo(str(repo.path), name="sym", quick=True, trigger="schedule")
    assert report.symbols_stored and report.symbol_files >= 1
    assert core.symbols is not None and core.symbols.commits()["sym"] == repo.head()
    answer = core.ask(WHERE, CLI)
    assert "refine.py:L5-L7" in answer.text, answer.text
    status = core.run_command("status", CLI).text
    assert "symbol table: behind" not in status and "interrupted" not in status
    core.close()


def test_a_failed_symbol_write_is_reported_and_not_used(make_repo, tmp_path):
    """A write of the symbol table that fails (a full disk, a lock held too long) is logged,
    reported with the ingest, and leaves the table visibly behind rather than wrong."""
    repo = make_repo("sym")
    repo.write("refine.py", REFINE_OLD)
    repo.commit("refine")
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="sym")
    repo.write("refine.py", REFINE_NEW)
    repo.commit("reorder")

    blocker = sqlite3.connect(symbols_path(Settings()), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write waits out its busy timeout, then fails
    try:
        report = core.index_repo(str(repo.path), name="sym")
    finally:
        blocker.rollback()
        blocker.close()
    assert report.commit == repo.head() and not report.symbols_stored
    answer = core.ask(WHERE, CLI)
    assert "refine.py:L1-L3" not in answer.text
    assert "symbol table: behind the index" in core.run_command("status", CLI).text

    again = core.index_repo(str(repo.path), name="sym")
    assert again.symbols_stored
    assert "refine.py:L5-L7" in core.ask(WHERE, CLI).text
    core.close()
