"""`codecite forget <repo>` end to end, through subprocesses, as an operator runs it: asked
on a terminal (a real pseudo-terminal), refused without `--yes` when stdin is not one,
and afterwards the repository gives nothing while the other answers as before."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import ROOT, run_cli
from tests.support.shop import build_shop
from tests.support.snippets import LEDGER_PY

REFUSED_OFF_TTY = (
    "error: Not forgetting shop: stdin is not a terminal to ask on; add --yes to confirm.\n"
)


@pytest.fixture
def home(make_repo: Any, tmp_path: Path) -> Path:
    shop = make_repo("shop")
    build_shop(shop)
    billing = make_repo("billing")
    billing.write("billing/ledger.py", LEDGER_PY)
    billing.commit("ledger")
    home = tmp_path / "home"
    for repo in (shop, billing):
        indexed = run_cli(home, "index", str(repo.path))
        assert indexed.returncode == 0, indexed.stderr
    return home


def on_a_terminal(home: Path, *args: str, typed: bytes) -> tuple[int, str]:
    """Run `codecite` with a pseudo-terminal for stdin (what the operator types: `typed`)."""
    controller, terminal = pty.openpty()
    env = {**os.environ, "CODECITE_HOME": str(home), "COLUMNS": "200"}
    child = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli.main", *args],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=ROOT,
    )
    os.close(terminal)
    try:
        os.write(controller, typed)
        out, _ = child.communicate(timeout=120)
    finally:
        os.close(controller)
    return child.returncode, out.decode()


def search(home: Path, question: str) -> list[dict[str, Any]]:
    result = run_cli(home, "search", question, "--json", "--top-k", "20")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_without_a_terminal_only_yes_forgets(home: Path) -> None:
    refused = run_cli(home, "forget", "shop", stdin="y\n")
    assert (refused.returncode, refused.stderr, refused.stdout) == (2, REFUSED_OFF_TTY, "")
    assert "shop" in run_cli(home, "repos").stdout

    unknown = run_cli(home, "forget", "nope", "--yes")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr == "error: There is no repository named 'nope' here.\n"

    billing_before = search(home, "reconcile the ledger batch statement")
    assert {row["repo"] for row in search(home, "webhooks retry charge customer")} == {"shop"}
    done = run_cli(home, "forget", "shop", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.replace("\n", " ").startswith("Forgot shop: removed 3 files and ")

    assert search(home, "webhooks retry charge customer") == []
    assert search(home, "reconcile the ledger batch statement") == billing_before
    assert "shop" not in run_cli(home, "status").stdout
    assert "shop" not in run_cli(home, "repos").stdout
    answer = run_cli(home, "ask", "where is WebhookSender defined?")
    assert answer.returncode == 0 and "shop/" not in answer.stdout
    again = run_cli(home, "forget", "shop", "--yes")
    assert (again.returncode, again.stderr) == (
        2,
        "error: There is no repository named 'shop' here.\n",
    )


def test_on_a_terminal_it_asks_and_no_keeps_everything(home: Path) -> None:
    code, out = on_a_terminal(home, "forget", "shop", typed=b"n\n")
    assert code == 1
    assert out.startswith("Forget shop? This removes its 3 files and ")
    assert "To confirm: answer below (or run `codecite forget shop --yes`)" in out
    assert out.rstrip().endswith("Forget shop now? [y/N] Nothing was forgotten.")
    assert "shop" in run_cli(home, "repos").stdout

    code, out = on_a_terminal(home, "forget", "shop", typed=b"\x04")  # Ctrl-D
    assert code == 1 and out.rstrip().endswith("Nothing was forgotten.")

    code, out = on_a_terminal(home, "forget", "shop", typed=b"y\n")
    assert code == 0 and "Forgot shop: removed 3 files and " in out
    assert "shop" not in run_cli(home, "repos").stdout


def test_the_chat_forgets_with_a_confirming_line(home: Path) -> None:
    chat = run_cli(home, "chat", stdin="/forget shop\n/repos\n/forget shop yes\n/repos\n/quit\n")
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout.replace("\n", " ")
    asked = out.index("Forget shop? This removes")
    assert "To confirm: `/forget shop yes`" in out[asked:]
    listed = out.index("Repositories available here:", asked)
    assert "shop" in out[listed : out.index("Forgot shop:")]  # asking removed nothing
    assert "billing" in out[out.index("Forgot shop:") :]
    assert "• shop" not in out[out.index("Forgot shop:") :]
