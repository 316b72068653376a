"""How-it-works answers follow the code, in every language we chunk (a golden test).

Each fixture under tests/fixtures/howpaths/<language>/ is the same small shop: a
checkout that charges a card through a payment gateway, which signs the request. It is
committed to a real git repository, indexed (SQLite, the symbol table), and asked how
checkout charges the card, with no model: the answer must open with the path through
the code and show one excerpt per step, each labelled with its one definition. The
expected text is tests/bot/answer/golden/how_paths.txt; a mismatch prints a diff.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "howpaths"
GOLDEN = Path(__file__).with_name("golden") / "how_paths.txt"
LANGUAGES = ("python", "go", "typescript", "javascript", "java")
QUESTION = "how does checkout charge the card?"


def _summary(language: str, text: str) -> str:
    """The path line and each excerpt's label line, as the golden file keeps them."""
    lines = text.split("\n")
    kept = [lines[0]] + [line for line in lines if line.startswith("**")]
    return "\n".join([f"== {language}", *kept])


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tests.support.gitrepo import GitRepo

    home = tmp_path_factory.mktemp("home")
    mp = pytest.MonkeyPatch()
    mp.setenv("CODECITE_HOME", str(home))
    core = Core.from_settings(Settings(), FileConfig())
    out = {}
    try:
        for language in LANGUAGES:
            repo = GitRepo(tmp_path_factory.mktemp(language) / language)
            for path in sorted((FIXTURES / language).rglob("*")):
                if path.is_file():
                    repo.write(str(path.relative_to(FIXTURES / language)), path.read_text())
            repo.commit("shop")
            core.index_repo(str(repo.path), name=language)
        for language in LANGUAGES:
            answer = core.ask(QUESTION, CLI, repos=frozenset({language}))
            out[language] = answer.text
    finally:
        core.close()
        mp.undo()
    return out


def test_how_answers_show_the_path_through_the_code(answers: dict[str, str]) -> None:
    got = "\n\n".join(_summary(lang, answers[lang]) for lang in LANGUAGES) + "\n"
    want = GOLDEN.read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "got")
    )
    assert got == want, f"how-paths differ from {GOLDEN.name}:\n{diff}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_step_is_quoted_once_and_cited_at_its_own_lines(
    answers: dict[str, str], language: str
) -> None:
    text = answers[language]
    assert text.startswith("The path through the code: ")
    labels = [line for line in text.split("\n") if line.startswith("**")]
    assert len(labels) == 3  # checkout, the gateway's charge, the signing
    assert all(", " not in line.split("`")[1] for line in labels)  # one definition each


def test_the_model_reads_the_path_first(make_repo: object) -> None:
    """With a model, the path's steps are sources 1, 2, 3 and the path is one of the facts."""
    from tests.servers.openai_fake import FakeOpenAI
    from tests.support.gitrepo import GitRepo

    repo = make_repo("python")  # type: ignore[operator]
    assert isinstance(repo, GitRepo)
    for path in sorted((FIXTURES / "python").rglob("*")):
        if path.is_file():
            repo.write(str(path.relative_to(FIXTURES / "python")), path.read_text())
    repo.commit("shop")
    with FakeOpenAI() as fake:
        settings = Settings(  # type: ignore[call-arg]
            OPENAI_API_KEY="sk-test-123456",
            OPENAI_BASE_URL=fake.base_url,
            CODECITE_EMBED_MODEL="none",
        )
        core = Core.from_settings(settings, FileConfig())
        core.index_repo(str(repo.path), name="python")
        core.ask(QUESTION, CLI)
        core.close()
        prompt = fake.bodies("/chat/completions")[-1]["messages"][-1]["content"]
    at = [line for line in prompt.split("\n") if line.startswith("<source-")]
    assert "(Checkout.run)" in at[0] and "(PaymentGateway.charge)" in at[1]
    assert "(sign_request)" in at[2]
    assert "The call path for this question: `Checkout.run` [1]" in prompt
