"""The long-running commands and the small ones around them, as a user (or a Procfile) runs them."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

from bot.config import Settings
from bot.wiring import make_stores
from tests.support.cli import run_cli as run
from tests.support.cli import start_cli
from tests.support.paths import ROOT
from tests.support.shop import build_shop
from tests.support.terminal import CTRL_C, TerminalSession


def test_serve_without_any_token_says_what_to_set(tmp_path):
    result = run(tmp_path / "home", "serve")
    assert result.returncode == 2
    assert result.stderr == (  # the error alone: no log line before it
        "error: Nothing to serve: set SLACK_BOT_TOKEN (Slack) or DISCORD_TOKEN (Discord).\n"
    )


def test_serve_slack_without_its_token(tmp_path):
    result = run(tmp_path / "home", "serve", "--slack")
    assert (result.returncode, result.stderr) == (2, "error: SLACK_BOT_TOKEN is not set.\n")


def test_serve_checks_every_setting_before_it_starts_anything(tmp_path, monkeypatch):
    """A mistake is found before the scheduler or the job runner starts (and logs)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "codecite.toml").write_text('[discord]\nadmin_role = "Maintainers"\n', encoding="utf-8")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-not-checked-yet")
    monkeypatch.setenv("DISCORD_TOKEN", "not-checked-yet")
    for name in ("SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
        monkeypatch.delenv(name, raising=False)
    slack = run(home, "serve", "--slack")
    assert (slack.returncode, slack.stderr) == (
        2,
        "error: Set SLACK_APP_TOKEN for Socket Mode, or SLACK_SIGNING_SECRET for HTTP mode.\n",
    )
    discord = run(home, "serve", "--discord")
    assert discord.returncode == 2
    assert discord.stderr.startswith("error: ") and "discord.admin_role" in discord.stderr
    assert discord.stderr.count("\n") == 1


def test_a_bad_setting_names_what_is_valid(tmp_path, monkeypatch):
    monkeypatch.setenv("CODECITE_FILE_WEIGHT", "2")
    monkeypatch.setenv("CODECITE_INDEX", "sqlite")
    result = run(tmp_path / "home", "status")
    assert (result.returncode, result.stderr) == (
        2,
        "error: CODECITE_INDEX=sqlite is not valid: use one of local, pinecone; "
        "CODECITE_FILE_WEIGHT=2 is not valid: use a number in 0..1.\n",
    )


def test_schedule_needs_configured_repositories(tmp_path):
    result = run(tmp_path / "home", "schedule")
    assert result.returncode == 2 and "[[repos]]" in result.stderr


def test_init_index_on_the_local_store(tmp_path):
    result = run(tmp_path / "home", "init-index")
    assert result.returncode == 0 and "needs no set-up" in result.stdout


def test_discord_invite_with_an_application_id(tmp_path):
    result = run(tmp_path / "home", "discord-invite", "123456789012345678")
    assert result.returncode == 0
    assert "client_id=123456789012345678" in result.stdout
    assert "applications.commands" in result.stdout


def test_feedback_when_there_is_none(tmp_path):
    result = run(tmp_path / "home", "feedback")
    assert result.returncode == 0 and "No feedback yet" in result.stdout


def test_standalone_scheduler_indexes_configured_repositories_and_stops_cleanly(
    make_repo, tmp_path
):
    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    home.mkdir()
    (home / "codecite.toml").write_text(
        f'[schedule]\ninterval = "1h"\njitter_seconds = 0\n\n'
        f'[[repos]]\nname = "shop"\npath = "{repo.path}"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "CODECITE_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli.main", "schedule"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        status = ""
        while time.monotonic() < deadline:
            status = run(home, "status").stdout
            if "last run" in status:
                break
            time.sleep(0.2)
        assert f"shop main@{repo.head()[:7]}" in status
        # Never indexed: the boot pass indexed it; its job keeps its usual time (1h).
        assert "(boot," in status and "next run" in status
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_a_reader_that_goes_away_ends_the_output_quietly(make_repo, tmp_path):
    """`codecite search x --json | head -1`: a closed pipe is the reader's choice, not an error."""
    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    assert run(home, "index", str(repo.path)).returncode == 0
    for command in (["search", "charge", "--json"], ["search", "charge"], ["status"]):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before anything is written
        proc = subprocess.run(
            [sys.executable, "-m", "adapters.cli.main", *command],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CODECITE_HOME": str(home)},
            cwd=ROOT,
            timeout=120,
        )
        os.close(write_end)
        assert proc.returncode == 0, (command, proc.stderr)
        assert proc.stderr == "", (command, proc.stderr)


def _wait_for(port: int, path: str, proc: subprocess.Popen[str]) -> tuple[int, str]:
    """Poll a child's port until it answers (or the child dies, or a minute passes)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            time.sleep(0.1)
    return 0, ""


def _stop(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, then the child's stderr. A child still running after 90 s (a loaded
    machine finishing an ingest it accepted, or a hang) is killed and the test fails
    showing what the child logged, rather than with a bare timeout."""
    proc.send_signal(signal.SIGTERM)
    try:
        _, stderr = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        raise AssertionError(f"the child did not stop on SIGTERM; its log:\n{stderr}") from None
    return stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_web_process_in_socket_mode_binds_port(tmp_path):
    """The Procfile's `web` line with an app token: a platform sees $PORT bound and healthy."""
    from tests.servers.slack_fake import APP_TOKEN, BOT_TOKEN, FakeSlack
    from tests.servers.slack_socket_fake import FakeSocketMode

    port = _free_port()
    with FakeSlack() as slack, FakeSocketMode() as socket_mode:
        slack.socket_url = socket_mode.url
        env = {
            **os.environ,
            "CODECITE_HOME": str(tmp_path / "home"),
            "PORT": str(port),
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_APP_TOKEN": APP_TOKEN,
            "CODECITE_SLACK_API_URL": slack.base_url,
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.cli.main", "serve", "--slack", "--no-schedule"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert _wait_for(port, "/healthz", proc) == (200, "ok")
            assert _wait_for(port, "/readyz", proc) == (200, "ready")
            assert slack.calls_to("apps.connections.open")  # and it is on Socket Mode
        finally:
            stderr = _stop(proc)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_the_scheduler_process_serves_health_and_webhooks_on_port(make_repo, tmp_path):
    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    home.mkdir()
    (home / "codecite.toml").write_text(
        f'[[repos]]\nname = "shop"\npath = "{repo.path}"\n', encoding="utf-8"
    )
    port = _free_port()
    env = {
        **os.environ,
        "CODECITE_HOME": str(home),
        "PORT": str(port),
        "CODECITE_WEBHOOK_SECRET": "hook-secret",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli.main", "schedule"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _wait_for(port, "/readyz", proc) == (200, "ready")
        digest = hmac.new(b"hook-secret", b"{}", hashlib.sha256).hexdigest()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/webhooks/github",
            data=b"{}",
            method="POST",
            headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": f"sha256={digest}"},
        )
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert resp.status == 200
    finally:
        stderr = _stop(proc)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_a_waiting_ingest_says_what_it_waits_for(make_repo, tmp_path):
    """A second `codecite index` of a repository being indexed names the run it waits for,
    piped (one line on stderr) and on a terminal (in place of the progress bars)."""
    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    stores = make_stores(Settings(CODECITE_HOME=home))  # type: ignore[call-arg]
    try:
        stores.runs.begin("shop", datetime.now(UTC) - timedelta(seconds=30), "schedule")
        with stores.locks.hold("shop"):  # the other ingest, under way
            proc = start_cli(
                home, "index", str(repo.path), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            notice = proc.stderr.readline()  # said before it waits, not after
            with TerminalSession(home, "index", str(repo.path), columns=120) as term:
                screen = term.expect("waiting for another ingest of shop to finish")
                term.type(CTRL_C)  # a wait on a lock ends at Ctrl-C, like any other
                assert term.finish() == 130
            assert term.text.endswith("interrupted\r\n")
            assert proc.poll() is None  # still waiting: the lock is held
        out, err = proc.communicate(timeout=60)
    finally:
        stores.close()
    # the run began 30 s before the CLI started; a loaded machine may add seconds
    waited = re.fullmatch(
        r"waiting for another ingest of shop to finish \(started (\d+) s ago by schedule\)\n",
        notice,
    )
    assert waited and int(waited.group(1)) >= 30
    assert re.search(r"\(started \d+ s ago by schedule\)", screen)
    assert proc.returncode == 0 and "Indexed shop" in out and err == ""
