"""The long-running commands and the small ones around them, as a user (or a Procfile) runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.support.cli import run_cli as run
from tests.support.paths import ROOT
from tests.support.shop import build_shop


def test_serve_without_any_token_says_what_to_set(tmp_path):
    result = run(tmp_path / "home", "serve")
    assert result.returncode == 2
    assert "SLACK_BOT_TOKEN" in result.stderr and "DISCORD_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_slack_without_its_token(tmp_path):
    result = run(tmp_path / "home", "serve", "--slack")
    assert result.returncode == 2 and "SLACK_BOT_TOKEN is not set" in result.stderr


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
