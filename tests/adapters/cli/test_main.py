"""The `codecite` command end to end, through subprocesses, as a user runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.shop import build_shop


def run(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(home, *args, stdin=stdin)


@pytest.fixture
def indexed(make_repo, tmp_path):
    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    result = run(home, "index", str(repo.path))
    assert result.returncode == 0, result.stderr
    assert "Indexed shop" in result.stdout
    return home, repo


def test_ask_prints_a_cited_answer(indexed):
    home, repo = indexed
    result = run(home, "ask", "where do we retry failed webhooks?")
    assert result.returncode == 0, result.stderr
    assert "No language model is configured" in result.stdout
    assert "shop/webhooks.py:L" in result.stdout
    assert f"shop main@{repo.head()[:7]}" in result.stdout


def test_search_json_contract(indexed):
    home, _ = indexed
    result = run(home, "search", "charge customer card", "--top-k", "3", "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert 1 <= len(rows) <= 3
    for row in rows:
        assert {"path", "start_line", "end_line", "symbol", "score"} <= set(row)
        assert 1 <= row["start_line"] <= row["end_line"]
    assert rows[0]["path"] == "shop/billing.py"
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)


def test_search_json_carries_an_absolute_relevance(indexed):
    home, _ = indexed
    strong = run(home, "search", "charge customer card", "--top-k", "3", "--json")
    weak = run(home, "search", "retry_webhooks_with_jitter_v2 customer", "--top-k", "3", "--json")
    assert strong.returncode == weak.returncode == 0, strong.stderr + weak.stderr
    good = [json.loads(line) for line in strong.stdout.splitlines()]
    poor = [json.loads(line) for line in weak.stdout.splitlines()]
    assert set(good[0]) == {
        *("kind", "repo", "path", "start_line", "end_line", "symbol", "score"),
        "relevance",
    }
    # Both first hits rank first (score ~1), but only one of them covers its question.
    assert good[0]["relevance"] == 1.0
    assert poor and max(r["relevance"] for r in poor) < 0.2
    assert all(0.0 <= r["relevance"] <= 1.0 for r in good + poor)


def test_ask_says_what_the_code_does_not_mention(indexed):
    home, _ = indexed
    result = run(home, "ask", "how do we charge customers in PostgreSQL?")
    assert result.returncode == 0, result.stderr
    assert "The indexed code does not seem to mention PostgreSQL; the nearest places are:" in (
        result.stdout
    )
    assert "shop/" in result.stdout  # the nearest places are still listed


def test_chat_reads_questions_from_stdin(indexed):
    home, _ = indexed
    result = run(home, "chat", stdin="/repos\nwhere is the volume discount?\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert "Repositories available here" in result.stdout
    assert "shop/billing.py:L" in result.stdout


def test_chat_map_command_prints_the_repository_map(indexed):
    home, _ = indexed
    result = run(home, "chat", stdin="/map\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert "shop/" in result.stdout and "billing.py" in result.stdout
    assert "Commands:" not in result.stdout  # answered, not the help line


def test_status_and_repos(indexed):
    home, repo = indexed
    status = run(home, "status")
    assert status.returncode == 0 and f"shop main@{repo.head()[:7]}" in status.stdout
    assert "extractive" in status.stdout
    repos = run(home, "repos")
    assert repos.returncode == 0 and "shop" in repos.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("index", "/definitely/not/here"), "error:"),
        (("index", "ftp://example.com/repo.git"), "error:"),
        (("ask", "   "), "Please ask a question"),
        (("ask", "x" * 40_000), "too long"),
        (("ask", "anything", "--repo", "nope"), "not indexed"),
        (("search", "x", "--top-k", "0"), "top-k"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(indexed, args, message):
    home, _ = indexed
    result = run(home, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert len(result.stderr.strip().splitlines()) == 1


def test_nothing_indexed_yet(tmp_path):
    result = run(tmp_path / "empty", "ask", "hello?")
    assert result.returncode == 2
    assert "Nothing is indexed yet" in result.stderr


def test_index_is_untouched_by_a_failed_command(indexed):
    home, _ = indexed
    before = run(home, "search", "retry", "--json").stdout
    assert run(home, "index", "/nope/nope").returncode == 2
    assert run(home, "search", "retry", "--json").stdout == before


def test_reindex_and_the_chat_commands_share_the_table(indexed):
    home, repo = indexed
    result = run(home, "reindex", "shop")
    assert result.returncode == 0, result.stderr
    assert f"• shop: up to date at {repo.head()[:7]}" in result.stdout
    chat = run(home, "chat", stdin="/reindex shop\n/help\n/nope\n/quit\n")
    assert chat.returncode == 0, chat.stderr
    assert "• shop: up to date" in chat.stdout
    assert "  /status          what is indexed" in chat.stdout  # help in the chat's syntax
    assert "codecite status" not in chat.stdout
    assert "There is no /nope command; /help lists them." in chat.stdout
    status = run(home, "status")
    assert "(cli command" in status.stdout  # the runs were logged with their trigger


def test_default_scope_is_for_chats_not_the_operators_terminal(indexed, make_repo):
    """codecite.toml narrows unmapped chat channels to shop; the terminal still sees docs."""
    home, _ = indexed
    docs = make_repo("docs")
    docs.write("guide/setup.py", "def onboarding_marker():\n    return 'hello'\n")
    docs.commit("docs")
    assert run(home, "index", str(docs.path)).returncode == 0
    (home / "codecite.toml").write_text('default_scope = ["shop"]\n', encoding="utf-8")
    repos = run(home, "repos").stdout
    assert "• docs" in repos and "• shop" in repos
    answer = run(home, "ask", "where is onboarding_marker defined?")
    assert answer.returncode == 0 and "guide/setup.py:L1-L2" in answer.stdout
    narrowed = run(home, "ask", "where is onboarding_marker defined?", "--repo", "shop")
    assert "guide/setup.py" not in narrowed.stdout
