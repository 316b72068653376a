"""An ingest killed outright (kill -9) leaves nothing behind: its worker processes and
multiprocessing's resource tracker end with it (issue 27: 7 of 10 kills left them).

The CLI's `codecite index` prepares files in worker processes (CODECITE_INGEST_WORKERS,
above a few MB of text); it is killed once its workers run, and every process that
names its data directory must be gone soon after.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.children import gone_within, processes_of
from tests.support.cli import start_cli
from tests.support.gitrepo import GitRepo

KILLS = 3
MODULE = '''"""Generated module {n}: enough text that an ingest starts worker processes."""


def compute_{n}_{m}(values, factor={m}):
    """Scale the values of batch {m} of module {n}."""
    total = 0
    for value in values:
        total += value * factor
    return total
'''


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """About 6 MB of Python: over the size below which files are prepared in-process."""
    repo = GitRepo(tmp_path_factory.mktemp("orphans") / "big")
    for n in range(240):
        repo.write(f"pkg/mod_{n}.py", "\n\n".join(MODULE.format(n=n, m=m) for m in range(90)))
    repo.commit("generated")
    return repo


def _workers(home: Path, cli: int) -> list[int]:
    return [pid for pid in processes_of(home, b"spawn_main") if pid != cli]


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(KILLS))
def test_a_killed_ingest_takes_its_workers_and_the_resource_tracker_with_it(
    big_repo: GitRepo, tmp_path: Path, attempt: int
) -> None:
    home = tmp_path / "home"
    env = {"CODECITE_INGEST_WORKERS": "3"}
    proc = start_cli(
        home,
        "index",
        str(big_repo.path),
        extra_env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_workers(home, proc.pid)) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, "the ingest ended before its workers were seen"
            time.sleep(0.05)
        started = processes_of(home)
        assert len(_workers(home, proc.pid)) >= 2, started
        assert any(pid != proc.pid for pid in processes_of(home, b"resource_tracker"))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert gone_within(started, home, timeout=30), processes_of(home)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in processes_of(home):  # nothing outlives the test, whatever it found
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
