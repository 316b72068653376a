"""Golden answers to definition and caller questions, one small project per language.

Each directory of tests/fixtures/definitions is a project written for this test in
one language, with the shapes issue 26 names: re-exports and aliases, methods called
through a receiver whose type the code states, members made at run time in a loop
over names, calls of builtins and the standard library beside calls of the project's
own namesakes, and names the code does not let anyone resolve. It is committed to a
real git repository, ingested by a real Core (SQLite, no model), and asked the
questions of its `questions.txt`; the answers must match `golden/<language>.txt`.

On a mismatch the test prints a unified diff. After checking a change by eye,
regenerate with `UPDATE_GOLDEN=1 pytest tests/bot/answer/test_definitions_golden.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from tests.support.golden import check_golden
from tests.support.paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "definitions"
GOLDEN = Path(__file__).resolve().parent / "golden"
LANGUAGES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def questions(language: str) -> list[str]:
    text = (FIXTURES / language / "questions.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def answers(core: Core, language: str) -> str:
    out = [
        f"# Answers about tests/fixtures/definitions/{language} (no model).",
        "# Regenerate: UPDATE_GOLDEN=1 pytest tests/bot/answer/test_definitions_golden.py",
    ]
    for question in questions(language):
        answer = core.ask(question, CLI)
        cited = ", ".join(c.label for c in answer.citations[:6])
        out += ["", f"## {question}", answer.text.rstrip(), f"-- cited: {cited}"]
    return "\n".join(out) + "\n"


@pytest.fixture
def core(make_repo, request: pytest.FixtureRequest):
    language = request.param
    repo = make_repo(language)
    source = FIXTURES / language
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name != "questions.txt":
            repo.write(str(path.relative_to(source)), path.read_text(encoding="utf-8"))
    repo.commit(f"{language} fixture")
    bot = Core.from_settings(Settings(), FileConfig())
    bot.index_repo(str(repo.path), name=language)
    yield bot, language
    bot.close()


@pytest.mark.parametrize("core", LANGUAGES, indirect=True)
def test_definition_answers_match_golden(core) -> None:
    bot, language = core
    check_golden(GOLDEN / f"{language}.txt", answers(bot, language), f"{language} answers")
