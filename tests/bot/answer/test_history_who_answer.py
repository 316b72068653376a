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
    repo.write("src/ptr.rs", RUST)
    commit_as(repo, "Add Own", "Ann", 1_700_000_000)
    repo.write("src/ptr.rs", RUST.replace("self.ptr\n", "self.ptr + 0\n"))
    cast = commit_as(repo, "Cast through zero", "Bob", 1_700_000_100)
    repo.write(
        "src/ptr.rs",
        RUST.replace("self.ptr\n", "self.ptr + 0\n").replace("{ ptr }", "{ ptr: ptr }"),
    )
    commit_as(repo, "Spell out the field", "Cy", 1_700_000_200)  # changes `new`, and so `Own`
    lines = (repo.path / "src/ptr.rs").read_text().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if "fn cast" in line)
    assert git_last_change(repo.path, "src/ptr.rs", start, start + 2) == cast
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="demo")
    assert _first_commit(core, question) == cast
    core.close()


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
    repo.write("lib/runner.js", JS)
    commit_as(repo, "Add Runner", "Ann", 1_700_000_000)
    repo.write("lib/runner.js", JS.replace("fn(this.suite)", "fn(this.suite, 1)"))
    run = commit_as(repo, "Run with one", "Bob", 1_700_000_100)
    repo.write(
        "lib/runner.js",
        JS.replace("fn(this.suite)", "fn(this.suite, 1)").replace("= null", "= undefined"),
    )
    commit_as(repo, "Abort to undefined", "Cy", 1_700_000_200)
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="demo")
    assert _first_commit(core, "who last changed Runner.prototype.run?") == run
    core.close()
