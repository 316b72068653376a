"""History questions in the terminal chat and through `codecite ask`, and `codecite log`, on
one repository with a squash "(#12)", a merge "#34", a rename and a tag: the same commits as
the shared core cites, in its order, with plain commit and pull-request URLs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.models import Answer
from tests.support.cli import run_cli
from tests.support.history_everywhere import (
    QUESTIONS,
    TERMINAL,
    TERMINAL_SOURCE,
    WEB,
    History,
    check_gold,
    check_rendered,
    indexed_history,
    reference,
    terminal_sources,
)
from tests.support.terminal import CTRL_D, TerminalSession

PROMPT = "\x1b[1myou>\x1b[0m "


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[History, dict[str, Answer]]:
    history = indexed_history(tmp_path_factory.mktemp("history-cli"))
    copy = history.home.parent / "reference-home"
    shutil.copytree(history.home, copy)  # the reference's own writes stay out of the tests'
    return history, reference(copy)


@pytest.fixture
def history(indexed: tuple[History, dict[str, Answer]], tmp_path: Path) -> History:
    """A data directory of the test's own, copied from the indexed one."""
    shared = indexed[0]
    home = tmp_path / "home"
    shutil.copytree(shared.home, home)
    return History(home, shared.repo, shared.shas)


@pytest.fixture
def answers(indexed: tuple[History, dict[str, Answer]]) -> dict[str, Answer]:
    return indexed[1]


def _check(output: str, answer: Answer) -> None:
    sources = terminal_sources(output)
    check_rendered(sources, answer, TERMINAL, TERMINAL_SOURCE)
    assert "](<" not in sources and "|" not in sources  # no chat markup in a terminal


def test_the_reference_answers_cite_the_right_commits(
    indexed: tuple[History, dict[str, Answer]],
) -> None:
    history, answers = indexed
    check_gold(answers, history.shas)


@pytest.mark.parametrize("question", QUESTIONS)
def test_codecite_ask_cites_what_the_core_cites(
    history: History, answers: dict[str, Answer], question: str
) -> None:
    result = run_cli(history.home, "ask", question, columns=100)
    assert result.returncode == 0, result.stderr
    _check(result.stdout, answers[question])


def test_the_terminal_chat_cites_what_the_core_cites(
    history: History, answers: dict[str, Answer]
) -> None:
    with TerminalSession(history.home, "chat", columns=100) as term:
        term.expect(PROMPT)
        for question in QUESTIONS:
            start = len(term.output)
            term.type(question + "\r")
            term.expect(PROMPT, after=start)
            _check(term.output[start:].decode(errors="replace"), answers[question])
        term.type(CTRL_D)
        assert term.finish() == 0


# -- codecite log -----------------------------------------------------------------------------


def _listed(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()[1:] if line.startswith("  ") and
            not line.strip().startswith("https://")]  # fmt: skip


def test_log_of_a_renamed_file_follows_it_back(history: History) -> None:
    s = history.shas
    result = run_cli(history.home, "log", "demo", "pkg/functions.py")
    assert result.returncode == 0, result.stderr
    # After the rename, and before it under its old name (pkg/core.py), newest first.
    before = [s["merge"], s["main"], s["side"], s["tweak"], s["first"]]
    assert _listed(result.stdout) == [c[:8] for c in [s["delete"], s["move"], s["rename"], *before]]
    assert f"{WEB}/commit/{s['rename']}" in result.stdout
    assert result.stdout.count(f"{WEB}/pull/12") == 1 and f"{WEB}/pull/34" in result.stdout
    assert "(#12) (#12)" not in result.stdout  # the subject names its PR already


def test_log_of_a_symbol_follows_its_current_lines(history: History) -> None:
    s = history.shas
    result = run_cli(history.home, "log", "demo", "f2")
    assert result.returncode == 0, result.stderr
    text = (history.repo / "pkg/functions.py").read_text().splitlines()
    start = text.index("def f2(x):") + 1
    assert f"f2 (pkg/functions.py:L{start}-L{start + 2})" in result.stdout.splitlines()[0]
    # The rename and the lines added above it moved f2 but changed none of its lines.
    assert _listed(result.stdout) == [s["tweak"][:8], s["first"][:8]]
    assert f"{WEB}/pull/12" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("log", "nosuch", "pkg/functions.py"), "The repository 'nosuch' is not indexed."),
        (("log", "demo", "pkg/missing.py"), "No recorded commit of demo touched"),
        (("log", "demo", "no_such_symbol"), "No recorded commit of demo touched"),
    ],
)
def test_bad_log_targets_get_one_line(
    history: History, args: tuple[str, ...], message: str
) -> None:
    result = run_cli(history.home, *args)
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_log_of_a_repository_indexed_without_history_says_so(history: History) -> None:
    again = run_cli(history.home, "index", str(history.repo), "--name", "plain", "--no-history")
    assert again.returncode == 0, again.stderr
    result = run_cli(history.home, "log", "plain", "pkg/functions.py")
    assert result.returncode != 0 and result.stderr.count("\n") == 1
    assert "indexed without it" in result.stderr and "Traceback" not in result.stderr
    assert run_cli(history.home, "log", "demo", "f2").returncode == 0  # the other one still has it
