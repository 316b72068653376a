"""Line attribution that must match `git log -1 -L` where a diff could be drawn two ways
(the gold of "who last changed X"), on real repositories built in temp dirs."""

from __future__ import annotations

from bot.config import FileConfig, Settings
from bot.core import Core
from tests.support.history_repo import commit_as, git_last_change, mismatches, recorded_last_change

FILE = "pkg/fixtures.py"


def _decorated(*names: str) -> str:
    return "\n\n".join(f"@fixture\ndef {n}():\n    return {n!r}\n" for n in names)


def test_an_inserted_function_is_placed_as_git_log_L_places_it(make_repo) -> None:  # type: ignore[no-untyped-def]
    # Inserting `b` between two decorated functions can be drawn as "@fixture..b" or as
    # "def b..@fixture" (the decorator of `c`). `git log -L` diffs without the indent
    # heuristic that `git diff` applies by default: the change then ends on `c`'s
    # decorator, and git says the insertion last changed `c`.
    repo = make_repo("demo")
    repo.write(FILE, _decorated("a", "c"))
    first = commit_as(repo, "Add a and c", "Ann", 1_700_000_000)
    repo.write(FILE, _decorated("a", "b", "c"))
    insert = commit_as(repo, "Add b", "Bob", 1_700_000_100)
    repo.write(FILE, _decorated("a", "b", "c").replace("'a'", "'A'"))
    commit_as(repo, "Shout a", "Cy", 1_700_000_200)
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="demo")
    lines = (repo.path / FILE).read_text().splitlines()
    c = lines.index("def c():")  # 1-based: the decorator's line
    assert git_last_change(repo.path, FILE, c, c + 2) == insert  # what git says, so
    assert recorded_last_change(core, "demo", FILE, c, c + 2) == insert
    b = lines.index("def b():")
    assert git_last_change(repo.path, FILE, b, b) == first
    assert recorded_last_change(core, "demo", FILE, b, b) == first
    assert mismatches(core, repo, "demo", FILE) == []
    core.close()
