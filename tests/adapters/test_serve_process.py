"""`codecite serve` as a real process with a configured repository: its ingest runs in a
child process, and neither SIGTERM nor kill -9 of `serve` leaves that child behind."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.config import Settings
from tests.support.cli import run_cli, start_cli
from tests.support.shop import build_shop

HANDLER = '''"""Handler {n}."""


def handle_event_{n}(event, store):
    """Store event {n} once, keyed by its id."""
    if store.seen(event.id):
        return False
    store.put(event.id, event.payload)
    return True
'''


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _processes_of(home: Path, command: bytes = b"") -> list[int]:
    """Processes (other than this one) whose environment names this data directory, and
    whose command line holds `command`."""
    marker = f"CODECITE_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            mine = marker in (entry / "environ").read_bytes().split(b"\0")
            if mine and command in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie is already gone, only not yet reaped
                    found.append(int(entry.name))
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


def _ingest_child(home: Path, serve: subprocess.Popen[str], timeout: float = 90.0) -> int:
    """The ingest child (not multiprocessing's resource tracker), once it leads its own
    process group (so a Ctrl-C at the terminal reaches only serve)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and serve.poll() is None:
        for pid in _processes_of(home, b"spawn_main"):
            with contextlib.suppress(ProcessLookupError):
                if os.getpgid(pid) == pid:
                    return pid
        time.sleep(0.05)
    serve.kill()
    raise AssertionError(f"serve started no ingest process; its log:\n{serve.communicate()[1]}")


def _gone_within(pids: list[int], home: Path, timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not set(pids) & set(_processes_of(home)):
            return True
        time.sleep(0.1)
    return False


@contextmanager
def _serving(tmp_path: Path, make_repo) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    from tests.servers.slack_fake import APP_TOKEN, BOT_TOKEN, FakeSlack
    from tests.servers.slack_socket_fake import FakeSocketMode

    repo = make_repo("shop")
    for number in range(300):  # enough work that the ingest is still under way when looked at
        repo.write(f"shop/handlers/h{number}.py", HANDLER.format(n=number))
    build_shop(repo)
    home = tmp_path / "home"
    home.mkdir()
    other = make_repo("other")  # the index exists (and is set up) before serve starts
    other.write("notes.py", "def note():\n    return 1\n")
    other.commit("notes")
    indexed = run_cli(home, "index", str(other.path))
    assert indexed.returncode == 0, indexed.stderr
    (home / "codecite.toml").write_text(
        f'[[repos]]\nname = "shop"\npath = "{repo.path}"\n', encoding="utf-8"
    )
    with FakeSlack() as slack, FakeSocketMode() as socket_mode:
        slack.socket_url = socket_mode.url
        env = {
            "PORT": str(_free_port()),
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_APP_TOKEN": APP_TOKEN,
            "CODECITE_SLACK_API_URL": slack.base_url,
        }
        proc = start_cli(
            home, "serve", "--slack", extra_env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            yield proc, home
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


@contextmanager
def _index_write_locked(home: Path, child: int) -> Iterator[None]:
    """Taken as soon as the ingest child appears: from here it can work and read, not commit,
    so it is still under way (checked) while this holds."""
    conn = sqlite3.connect(Settings(home=home).index_path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        os.kill(child, 0)  # ProcessLookupError: the ingest ended before the lock was taken
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def test_sigterm_cancels_the_ingest_child_and_serve_exits_cleanly(tmp_path, make_repo):
    with _serving(tmp_path, make_repo) as (proc, home):
        child = _ingest_child(home, proc)
        with _index_write_locked(home, child):
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert "Traceback" not in stderr
        assert "boot: indexing shop" in stderr
        assert _gone_within([child], home)


def test_a_killed_serve_takes_its_ingest_child_with_it(tmp_path, make_repo):
    with _serving(tmp_path, make_repo) as (proc, home):
        child = _ingest_child(home, proc)
        with _index_write_locked(home, child):
            proc.kill()
            proc.wait(timeout=60)
        assert _gone_within([child], home)  # told by the kernel (PR_SET_PDEATHSIG)
