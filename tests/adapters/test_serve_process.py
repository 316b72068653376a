"""`codecite serve` and `codecite schedule` as real processes with a configured repository:
their ingests run in a child process, and neither SIGTERM nor kill -9 of `serve` leaves
that child behind."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bot.config import Settings
from tests.support.children import gone_within, ingest_child
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


def _readiness_refused(port: int, *, within: float) -> int | None:
    """The status /readyz first answers other than 200 within `within` seconds, or None."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2)
        except urllib.error.HTTPError as refused:
            return refused.code
        time.sleep(0.1)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
        child = ingest_child(home, proc)
        with _index_write_locked(home, child):
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert "Traceback" not in stderr
        assert "boot: indexing shop" in stderr
        assert gone_within([child], home)


def test_a_killed_serve_takes_its_ingest_child_with_it(tmp_path, make_repo):
    with _serving(tmp_path, make_repo) as (proc, home):
        child = ingest_child(home, proc)
        with _index_write_locked(home, child):
            proc.kill()
            proc.wait(timeout=60)
        assert gone_within([child], home)  # told by the kernel (PR_SET_PDEATHSIG)


def test_schedule_ingests_in_a_child_process_that_ends_with_the_ingest(tmp_path, make_repo):
    """What an ingest held goes back to the system: the scheduler is left at its idle size."""
    repo = make_repo("shop")
    for number in range(300):
        repo.write(f"shop/handlers/h{number}.py", HANDLER.format(n=number))
    build_shop(repo)
    home = tmp_path / "home"
    home.mkdir()
    (home / "codecite.toml").write_text(
        f'[[repos]]\nname = "shop"\npath = "{repo.path}"\n', encoding="utf-8"
    )
    proc = start_cli(home, "schedule", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child = ingest_child(home, proc)
        assert child != proc.pid
        assert gone_within([child], home)  # the boot ingest ended, and its process with it
        assert proc.poll() is None  # the scheduler goes on
        status = run_cli(home, "status")
        assert "shop" in status.stdout and "never indexed" not in status.stdout, status.stdout
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "boot: indexing shop" in stderr and "Traceback" not in stderr


def test_sigterm_with_an_answer_in_flight_stops_within_the_deadline(tmp_path, make_repo):
    """Issue 27: SIGTERM with a streamed answer in flight exited 31 s later, past the 30 s a
    platform waits. Now: /readyz fails at once, the answer gets CODECITE_SHUTDOWN_GRACE, then
    ends with one line, and the process exits well before it would be killed."""

    from bot.runtime.drain import RESTARTED
    from tests.servers.openai_fake import FakeOpenAI
    from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
    from tests.support.slack_driver import CHANNEL, SIGNING_SECRET, Driver, replies_in

    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    indexed = run_cli(home, "index", str(repo.path))
    assert indexed.returncode == 0, indexed.stderr
    port = _free_port()
    with FakeSlack() as slack, FakeOpenAI() as openai:
        slack.add_conversation(CHANNEL, "public")
        openai.chat_reply = lambda body: " ".join(f"word{n}" for n in range(200)) + "."
        held = openai.hold_stream_next(after_chunks=6)  # this answer never finishes by itself
        env = {
            "PORT": str(port),
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "CODECITE_SLACK_API_URL": slack.base_url,
            "OPENAI_API_KEY": "sk-test-sigterm-01",
            "OPENAI_BASE_URL": openai.base_url,
            "CODECITE_EMBED_MODEL": "none",
            "CODECITE_SHUTDOWN_GRACE": "2",
        }
        proc = start_cli(
            home,
            "serve",
            "--slack",
            "--no-schedule",
            extra_env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            driver = Driver(slack, f"http://127.0.0.1:{port}/slack/events")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                    break
                except OSError:
                    time.sleep(0.2)
            asked = driver.say("where do we retry failed webhooks?")
            slack.wait_for(lambda: replies_in(slack, CHANNEL, asked["ts"]), timeout=60)
            proc.send_signal(signal.SIGTERM)
            # Readiness fails first, within the poll of the signal (longer on a loaded machine).
            refused = _readiness_refused(port, within=20)
            if refused is None:
                proc.kill()
                pytest.fail(
                    f"/readyz still 200 20 s after SIGTERM; stderr: {proc.communicate()[1]}"
                )
            assert refused == 503
            # 2 s of grace and 3 to end (25 + 3 by default, under the 30 s before SIGKILL); the
            # model alone would take its 60 s timeout. A loaded machine may be slower to exit.
            _, stderr = proc.communicate(timeout=90)
        finally:
            held.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, stderr
        assert "Traceback" not in stderr
        [answer] = replies_in(slack, CHANNEL, asked["ts"])
        assert RESTARTED in str(answer.get("text")), answer.get("text")
