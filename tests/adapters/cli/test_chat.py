"""`codecite chat` on a real terminal: line editing, history, Tab, Ctrl-C and Ctrl-D, its own
`/help`, and a `--repo` scope that every command of the session keeps."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from adapters.cli import chat
from bot.commands import ASK, COMMANDS, CommandSpec
from tests.servers.openai_fake import FakeOpenAI
from tests.support.cli import run_cli
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop
from tests.support.terminal import CTRL_C, CTRL_D, UP, TerminalSession

ANSWER = "Retries back off exponentially [1]. " * 20  # the fake model's (conftest)
PROMPT = "\x1b[1myou>\x1b[0m "  # bold: NO_COLOR is set, so no colour


@pytest.fixture
def home(tmp_path: Path, make_repo) -> Path:
    """Two repositories indexed: shop and docs (one marker each)."""
    shop: GitRepo = make_repo("shop")
    build_shop(shop)
    docs: GitRepo = make_repo("docs")
    docs.write("guide/__init__.py", 'def onboarding_marker():\n    """Say hello."""\n')
    docs.commit("docs")
    home = tmp_path / "home"
    for repo in (shop, docs):
        assert run_cli(home, "index", str(repo.path)).returncode == 0
    return home


def ask(term: TerminalSession, line: str) -> str:
    """Type `line` and Enter; what the screen got until the next prompt (the echo included)."""
    start = len(term.output)
    term.type(line + "\r")
    term.expect(PROMPT, after=start)
    return term.output[start:].decode(errors="replace")


def test_ctrl_d_leaves_the_cursor_on_a_fresh_line(home: Path) -> None:
    with TerminalSession(home, "chat") as term:
        term.expect(PROMPT)
        term.type(CTRL_D)
        assert term.finish() == 0
    assert term.text.endswith(PROMPT + "\r\n")  # the shell's prompt starts on its own line


def test_history_survives_the_session_and_up_recalls_it(home: Path) -> None:
    with TerminalSession(home, "chat") as term:
        term.expect(PROMPT)
        assert "Repositories available here:" in ask(term, "/repos")
        ask(term, "/repos")  # a repeat is stored once
        term.type(CTRL_D)
        assert term.finish() == 0
    history = home / "chat_history"
    assert history.read_text(encoding="utf-8").split() == ["/repos"]
    assert stat.S_IMODE(history.stat().st_mode) == 0o600  # it holds the questions asked
    with TerminalSession(home, "chat") as term:
        term.expect(PROMPT)
        start = len(term.output)
        term.type(UP)
        term.expect("/repos", after=start)  # recalled from the last session, not ^[[A
        screen = ask(term, "")
        term.type(CTRL_D)
        term.finish()
    assert "^[[A" not in term.text and "• shop" in screen


def test_tab_completes_a_command_and_ctrl_c_drops_the_line(home: Path) -> None:
    with TerminalSession(home, "chat") as term:
        term.expect(PROMPT)
        start = len(term.output)
        term.type("/ma\t")
        term.expect("/map ", after=start)
        screen = ask(term, "docs")
        assert "guide/ (1 file)" in screen
        start = len(term.output)
        term.type("where is half a question")
        term.expect("half a question", after=start)
        term.type(CTRL_C)
        term.expect(PROMPT, after=start)
        term.type(CTRL_D)
        assert term.finish() == 0
    assert "No language model" not in term.output[start:].decode()  # nothing was asked


def test_help_lists_the_chat_commands_from_the_table(home: Path) -> None:
    with TerminalSession(home, "chat", columns=120) as term:
        term.expect(PROMPT)
        screen = ask(term, "/help")
        term.type(CTRL_D)
        term.finish()
    for spec in COMMANDS:
        if spec is not ASK:
            assert f"  /{spec.usage} " in screen, spec.name
    assert "/reset" in screen and "/quit" in screen
    assert "codecite " not in screen.replace("codecite chat", "")  # no CLI commands


def test_a_command_added_to_the_table_is_in_help_and_tab(monkeypatch: pytest.MonkeyPatch) -> None:
    forget = CommandSpec("forget", "<repo>", "drop a repository", "Drop it", admin_only=True)
    monkeypatch.setattr(chat, "COMMANDS", (*COMMANDS, forget))
    assert "  /forget <repo>   drop a repository" in chat.help_text()
    assert "/forget" in chat.command_words()


def test_the_repo_scope_holds_for_every_command(home: Path) -> None:
    with TerminalSession(home, "chat", "--repo", "shop", columns=120) as term:
        term.expect(PROMPT)
        repos = ask(term, "/repos")
        whole_map = ask(term, "/map")
        other_map = ask(term, "/map docs")
        status = ask(term, "/status")
        reindex = ask(term, "/reindex")
        answer = ask(term, "where is onboarding_marker defined?")
        term.type(CTRL_D)
        assert term.finish() == 0
    assert "• shop" in repos and "docs" not in repos
    assert "shop/" in whole_map and "guide/" not in whole_map
    assert "The repository 'docs' is not available here." in other_map
    assert "shop main@" in status and "docs" not in status
    assert "• shop: up to date" in reindex and "docs" not in reindex
    assert "guide/__init__.py" not in answer
    assert "This chat sees only shop (--repo)." in term.text


def test_ctrl_c_stops_an_answer_and_the_chat_goes_on(
    home: Path, fake: FakeOpenAI, env: dict[str, str]
) -> None:
    release = fake.hold_stream_next(after_chunks=3)
    try:
        with TerminalSession(home, "chat") as term:
            term.expect(PROMPT)
            start = len(term.output)
            term.type("how are webhooks retried?\r")
            term.expect("Retries", after=start)  # the answer is being written
            term.type(CTRL_C)
            stopped = term.expect(PROMPT, after=start)
            assert "stopped" in stopped[len(stopped) - 40 :]
            assert "Repositories available here:" in ask(term, "/repos")
            term.type(CTRL_D)
            assert term.finish() == 0
    finally:
        release.set()
    assert "Traceback" not in term.text
