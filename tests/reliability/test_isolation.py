"""One repository's trouble stays its own: the scheduler, real git remotes, real SQLite.

Three configured repositories are ingested by the real APScheduler jobs at
once: a healthy one, one whose URL leads nowhere, and one full of binaries and
an oversized file. Then one repository's ingest fails midway (its chunker
refuses a file). Each time the others are indexed and answer exactly as
before, and the failure is told where an operator looks: the run log,
the scheduler's log and `codecite status` (which lists configured repositories
that never indexed, and records unexpected failures as failed runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.schedulers.background import BackgroundScheduler

from adapters.schedule import JOB_PREFIX, IngestScheduler
from bot.config import Settings
from bot.core import CLI, Core
from bot.errors import SourceError
from bot.ingest import prepare
from tests.support.fault_tally import FaultTally, tally_fixture
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop
from tests.support.snippets import LEDGER_PY

ROOT = Path(__file__).resolve().parents[2]
WEBHOOKS_Q = "where do we retry failed webhooks?"
LEDGER_Q = "how is a ledger batch reconciled against the bank statement?"
POISON = "ledger/summary.py"  # chunked after reconcile.py: the ingest fails midway
ANALYZE = prepare.analyze  # one parse gives a file's chunks and symbols

faults = tally_fixture()


def remote(repo: GitRepo, tmp_path: Path) -> str:
    return f"file://{repo.bare_clone(tmp_path / (repo.path.name + '.git'))}"


def heavy_repo(make_repo: Callable[..., GitRepo]) -> GitRepo:
    """Mostly binaries and one oversized text file, around one small module worth indexing."""
    repo = make_repo("heavy")
    repo.write("ledger/reconcile.py", LEDGER_PY)
    for i in range(40):  # images, archives, compiled objects: 8 MB of noise
        repo.write(f"assets/blob{i:02d}.bin", os.urandom(200_000))
    repo.write("assets/logo.png", b"\x89PNG\r\n\x1a\n" + os.urandom(300_000))
    repo.write("ledger/fixtures.py", "# generated\n" + "ROWS = [\n" + "  (1, 2, 3),\n" * 200_000)
    repo.write(
        "ledger/legacy.py",
        "# caf\xe9 cr\xe8me\ndef legacy_total(x):\n    return x\n".encode("latin-1"),
    )
    repo.write("ledger/nul.py", b"def f():\n    return 1\n\x00\x00\x00binary tail")
    repo.commit("heavy")
    return repo


def write_config(path: Path, repos: dict[str, str]) -> Path:
    lines = ['[schedule]\ninterval = "1h"\njitter_seconds = 0\n']
    for name, url in repos.items():
        lines.append(f'[[repos]]\nname = "{name}"\nurl = "{url}"\n')
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


class Scheduled:
    """The real IngestScheduler on a background scheduler; waits on its job events."""

    def __init__(self, core: Core) -> None:
        self.sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone=ZoneInfo("UTC")))
        self.runs: dict[str, list[JobExecutionEvent]] = {}
        self._cond = threading.Condition()
        self.sched.scheduler.add_listener(self._done, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)

    def _done(self, event: JobExecutionEvent) -> None:
        if event.job_id.startswith(JOB_PREFIX):
            with self._cond:
                self.runs.setdefault(event.job_id.removeprefix(JOB_PREFIX), []).append(event)
                self._cond.notify_all()

    def start(self, names: set[str]) -> dict[str, Any]:
        """Every repository's first run is due at once; wait until each has finished."""
        self.sched.install()
        self.sched.start()
        return self.wait(names, 1)

    def trigger(self, names: set[str]) -> dict[str, Any]:
        """Bring these repositories' scheduled jobs forward and wait for them."""
        counts = {name: len(self.runs.get(name, [])) for name in names}
        for name in names:
            assert self.sched.trigger_now(name)
        return {name: self.wait({name}, counts[name] + 1)[name] for name in names}

    def wait(self, names: set[str], count: int, timeout: float = 90.0) -> dict[str, Any]:
        """The latest job results, once each of `names` has run `count` times."""

        def done() -> bool:
            return all(len(self.runs.get(n, [])) >= count for n in names)

        with self._cond:
            if not self._cond.wait_for(done, timeout):
                raise AssertionError(f"runs so far: { {n: len(r) for n, r in self.runs.items()} }")
            return {name: self.runs[name][-1].retval for name in names}

    def close(self) -> None:
        self.sched.shutdown()


@pytest.fixture
def scheduled() -> Iterator[Callable[[Core], Scheduled]]:
    made: list[Scheduled] = []

    def make(core: Core) -> Scheduled:
        made.append(Scheduled(core))
        return made[-1]

    yield make
    for s in made:
        s.close()


def codecite_status(settings: Settings) -> str:
    """`codecite status` as an operator runs it: a separate process over the same home."""
    env = {**os.environ, "CODECITE_HOME": str(settings.home), "COLUMNS": "200"}
    env["CODECITE_CONFIG"] = str(settings.config_path)
    result = subprocess.run(
        [sys.executable, "-m", "adapters.cli.main", "status"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def cites(core: Core, question: str, repo: str) -> list[str]:
    answer = core.ask(question, CLI, repos=frozenset({repo}))
    return [c.path for c in answer.citations]


# -- (a) an unreachable remote and a binary-heavy repository beside a healthy one -----------


@pytest.fixture
def three_repos(
    make_repo: Callable[..., GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    shop = make_repo("shop")
    build_shop(shop)
    urls = {
        "shop": remote(shop, tmp_path),
        "gone": "file:///nonexistent.git",
        "heavy": remote(heavy_repo(make_repo), tmp_path),
    }
    config = write_config(tmp_path / "codecite.toml", urls)
    monkeypatch.setenv("CODECITE_CONFIG", str(config))
    return Settings()


def test_unreachable_and_heavy_repositories_do_not_hold_back_the_others(
    three_repos: Settings,
    scheduled: Callable[[Core], Scheduled],
    caplog: pytest.LogCaptureFixture,
    faults: FaultTally,
) -> None:
    core = Core.from_settings(three_repos)
    faults.inject("unreachable remote")
    faults.inject("binary-heavy repository")
    try:
        with caplog.at_level("WARNING", logger="adapters.schedule"):
            reports = scheduled(core).start({"shop", "gone", "heavy"})
        assert reports["gone"] is None  # failed, recorded, not raised into the scheduler
        assert {s.name for s in core.index.repo_states()} == {"shop", "heavy"}
        assert "shop/webhooks.py" in cites(core, WEBHOOKS_Q, "shop")
        assert "ledger/reconcile.py" in cites(core, LEDGER_Q, "heavy")

        heavy = reports["heavy"]
        assert heavy.skipped.get("too_large") == 1  # the 2.6 MB file
        assert sum(heavy.skipped.values()) >= 43  # and every binary, whatever the reason given
        indexed = set(core.index.manifest("heavy"))
        assert "ledger/reconcile.py" in indexed and "ledger/legacy.py" in indexed
        assert not indexed & {"ledger/fixtures.py", "ledger/nul.py", "assets/logo.png"}

        last = core.runs.last("gone")
        assert last is not None and not last.ok and last.trigger == "boot"  # its first run
        assert "\n" not in last.error and "Traceback" not in last.error
        failed = [
            r.getMessage() for r in caplog.records if "ingest of gone failed" in r.getMessage()
        ]
        assert failed, "the scheduler's log does not name the failing repository"
        faults.survive("unreachable remote")
        faults.survive("binary-heavy repository")
    finally:
        core.close()


def test_a_repository_that_never_indexed_shows_its_failure_in_status(
    three_repos: Settings, scheduled: Callable[[Core], Scheduled]
) -> None:
    core = Core.from_settings(three_repos)
    try:
        scheduled(core).start({"shop", "gone", "heavy"})
        error = core.runs.last("gone").error  # type: ignore[union-attr]
    finally:
        core.close()
    status = codecite_status(three_repos)
    assert "shop main@" in status and "heavy main@" in status
    assert "gone" in status and error in status


# -- (b) one ingest fails midway ---------------------------------------------------------------


def refuse(path: str) -> Callable[..., Any]:
    """The real parser, except that it fails on `path` as a parser that gives up would."""
    real = ANALYZE

    def analyze(file_path: str, text: str, language: str, **options: Any) -> Any:
        if file_path == path:
            raise SourceError(f"{path} could not be parsed.", detail="injected chunker failure")
        return real(file_path, text, language, **options)

    return analyze


@pytest.fixture
def two_repos(
    make_repo: Callable[..., GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Settings, dict[str, GitRepo], dict[str, Path]]:
    shop, ledger = make_repo("shop"), make_repo("ledger")
    build_shop(shop)
    ledger.write("ledger/reconcile.py", LEDGER_PY)
    ledger.commit("ledger")
    repos = {"shop": shop, "ledger": ledger}
    bares = {n: r.bare_clone(tmp_path / f"{n}.git") for n, r in repos.items()}
    config = write_config(tmp_path / "codecite.toml", {n: f"file://{b}" for n, b in bares.items()})
    monkeypatch.setenv("CODECITE_CONFIG", str(config))
    return Settings(), repos, bares


def test_an_ingest_failing_midway_leaves_the_other_repositories_alone(
    two_repos: tuple[Settings, dict[str, GitRepo], dict[str, Path]],
    scheduled: Callable[[Core], Scheduled],
    monkeypatch: pytest.MonkeyPatch,
    faults: FaultTally,
) -> None:
    settings, repos, bares = two_repos
    core = Core.from_settings(settings)
    try:
        run = scheduled(core)
        run.start({"shop", "ledger"})
        shop_before = core.ask(WEBHOOKS_Q, CLI, repos=frozenset({"shop"}))
        ledger_commit = core.runs.last("ledger").commit  # type: ignore[union-attr]

        repos["ledger"].write(POISON, "def summary():\n    return 0\n")
        repos["ledger"].write("ledger/reconcile.py", LEDGER_PY.replace("batch", "tranche"))
        repos["ledger"].commit("poison")
        repos["shop"].write(
            "shop/refunds.py", "def refund_partial_invoice(inv, amount):\n    pass\n"
        )
        shop_commit = repos["shop"].commit("refunds")
        for name, repo in repos.items():
            repo.push(bares[name])
        monkeypatch.setattr(prepare, "analyze", refuse(POISON))
        faults.inject("ingest failing midway")
        reports = run.trigger({"shop", "ledger"})  # both at once, one of them fails

        assert reports["ledger"] is None
        assert reports["shop"] is not None and reports["shop"].commit == shop_commit
        shop_after = core.ask(WEBHOOKS_Q, CLI, repos=frozenset({"shop"}))
        assert (shop_after.text, shop_after.citations) == (shop_before.text, shop_before.citations)
        hits = core.search("refund_partial_invoice", CLI, repos=frozenset({"shop"}), top_k=1)
        assert hits[0].chunk.path == "shop/refunds.py"
        # The failed repository keeps answering from its previous state.
        assert [s.commit for s in core.index.repo_states() if s.name == "ledger"] == [ledger_commit]
        assert "ledger/reconcile.py" in cites(core, LEDGER_Q, "ledger")
        assert not core.search("tranche", CLI, repos=frozenset({"ledger"}))
        failed = core.runs.last("ledger")
        assert failed is not None and failed.error == f"{POISON} could not be parsed."
        assert f"failed: {POISON} could not be parsed." in codecite_status(settings)
        faults.survive("ingest failing midway")

        monkeypatch.setattr(prepare, "analyze", ANALYZE)  # the parser is fixed
        fixed = run.trigger({"ledger"})["ledger"]
        assert fixed is not None and fixed.files_added == 1 and fixed.files_changed == 1
        assert core.search("tranche", CLI, repos=frozenset({"ledger"}))
    finally:
        core.close()


def test_a_crashing_ingest_is_recorded_for_status(
    two_repos: tuple[Settings, dict[str, GitRepo], dict[str, Path]],
    scheduled: Callable[[Core], Scheduled],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings, _, _ = two_repos

    def crash(file_path: str, text: str, language: str, **options: Any) -> Any:
        if file_path.startswith("ledger/"):
            raise RecursionError("maximum recursion depth exceeded")  # a parser bug
        return ANALYZE(file_path, text, language, **options)

    monkeypatch.setattr(prepare, "analyze", crash)
    core = Core.from_settings(settings)
    try:
        reports = scheduled(core).start({"shop", "ledger"})
        assert reports["shop"] is not None  # the crash stays in its own job
        last = core.runs.last("ledger")
        assert last is not None and not last.ok and "\n" not in last.error
    finally:
        core.close()
