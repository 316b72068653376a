""" "Who last changed X" answered for the definition X names, however the question spells
it (`Own::cast`, `crate::ptr::Own::cast`, "the most recent change to"), on real
repositories built in temp dirs, against what `git log -1 -L` says."""

from __future__ import annotations

import pytest

from bot.config import FileConfig, Settings
from bot.core import Core
from bot.models import Question
from bot.retrieval.history_who import qualified_names
from tests.support.history_repo import commit_as, git_last_change

RUST = """pub struct Own {
    ptr: usize,
}

impl Own {
    pub fn new(ptr: usize) -> Self {
        Own { ptr }
    }

    pub fn cast(self) -> usize {
        self.ptr
    }
}
"""


def _first_commit(core: Core, text: str) -> str:
    answer = core.answer(Question(text, frozenset({"demo"})))
    return next((c.sha for c in answer.citations if c.kind == "commit"), "")


def _three_changes(
    repo, path: str, text: str, asked: tuple[str, str], later: tuple[str, str]
) -> str:  # type: ignore[no-untyped-def]
    """Ann adds `text`, Bob makes the `asked` edit (its commit is returned), then Cy makes
    the `later` edit elsewhere in the file: only Bob's commit changed the lines asked about."""
    repo.write(path, text)
    commit_as(repo, "Add it", "Ann", 1_700_000_000)
    text = text.replace(*asked)
    repo.write(path, text)
    wanted = commit_as(repo, "The change asked about", "Bob", 1_700_000_100)
    repo.write(path, text.replace(*later))
    commit_as(repo, "A change beside it", "Cy", 1_700_000_200)
    return wanted


def _first_commit_indexed(repo, question: str) -> str:  # type: ignore[no-untyped-def]
    core = Core.from_settings(Settings(), FileConfig())
    try:
        core.index_repo(str(repo.path), name="demo")
        return _first_commit(core, question)
    finally:
        core.close()


@pytest.mark.parametrize(
    "question",
    [
        "who last changed Own::cast?",
        "who last changed crate::ptr::Own::cast?",
        "who made the most recent change to `Own::cast`, and when?",
    ],
)
def test_a_method_named_with_its_owner_is_the_one_asked_about(make_repo, question: str) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    # The later change is to `new`, and so to `Own`: only the cast's own lines point at Bob.
    cast = _three_changes(
        repo, "src/ptr.rs", RUST, ("self.ptr\n", "self.ptr + 0\n"), ("{ ptr }", "{ ptr: ptr }")
    )
    lines = (repo.path / "src/ptr.rs").read_text().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if "fn cast" in line)
    assert git_last_change(repo.path, "src/ptr.rs", start, start + 2) == cast
    assert _first_commit_indexed(repo, question) == cast


def test_qualified_names_are_spelled_as_the_symbol_table_spells_them() -> None:
    assert qualified_names("who touched Error::msg last?") == ["Error.msg"]
    assert qualified_names("who changed `Array#push`?") == ["Array.push"]
    assert qualified_names("who last changed crate::error::Error::msg?") == [
        "crate.error.Error.msg",
        "error.Error.msg",
        "Error.msg",
    ]
    assert qualified_names("who last changed Runner.prototype.run?") == ["Runner.run"]
    assert qualified_names("who last changed render?") == []


JS = """function Runner(suite) {
  this.suite = suite;
}

Runner.prototype.run = function (fn) {
  return fn(this.suite);
};

Runner.prototype.abort = function () {
  this.suite = null;
};
"""


def test_a_method_set_on_a_prototype_is_its_owners(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    run = _three_changes(
        repo,
        "lib/runner.js",
        JS,
        ("fn(this.suite)", "fn(this.suite, 1)"),
        ("= null", "= undefined"),
    )
    assert _first_commit_indexed(repo, "who last changed Runner.prototype.run?") == run
