"""History beside the index, against what git itself says (`git log -1 -L`), on a real
repository with merges, a rename, moved lines and deletions; then incremental updates,
a force-push, a blobless clone, a horizon, and secrets in messages."""

from __future__ import annotations

from pathlib import Path

from bot.config import FileConfig, Settings
from bot.core import Core
from bot.ingest.history import HistoryOptions
from tests.support.gitrepo import GitRepo, git
from tests.support.history_repo import build, commit_as, mismatches, recorded_last_change

FILE = "pkg/functions.py"


def _core() -> Core:
    return Core.from_settings(Settings(), FileConfig())


def _ours(core: Core, repo: str, file: str, start: int, end: int) -> str:
    return recorded_last_change(core, repo, file, start, end)


def _mismatches(core: Core, repo: GitRepo, name: str, file: str = FILE) -> list[tuple[int, int]]:
    return mismatches(core, repo, name, file)


def test_every_range_is_attributed_as_git_log_L_says(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = build(repo)
    core = _core()
    report = core.index_repo(str(repo.path), name="demo")
    assert report.history is not None and report.history.commits == len(shas)
    assert _mismatches(core, repo, "demo") == []
    # The cases that make it hard, by name: each one is what git says.
    text = (repo.path / FILE).read_text().splitlines()
    f5 = text.index("def f5(x):") + 1
    assert _ours(core, "demo", FILE, f5 + 1, f5 + 1) == shas["side"]  # a side-branch line
    assert _ours(core, "demo", FILE, 1, 1) == shas["move"]  # inserted above
    f1 = text.index("def f1(x):") + 1
    assert _ours(core, "demo", FILE, f1, f1 + 2) == shas["move"]  # the moved function
    f4 = text.index("def f4(x):") + 1
    assert _ours(core, "demo", FILE, f4 + 1, f4 + 1) == shas["first"]  # through the rename
    core.close()


def test_new_commits_are_added_incrementally_and_stay_exact(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    build(repo)
    core = _core()
    core.index_repo(str(repo.path), name="demo")
    text = (repo.path / FILE).read_text()
    repo.write(FILE, text.replace("y = x + 4", "y = x + 44").replace("def f6", "# six\ndef f6"))
    commit_as(repo, "Change f4, note f6", "Eve", 1_800_000_000)
    report = core.index_repo(str(repo.path), name="demo")
    assert report.history is not None
    assert report.history.commits_added == 1 and not report.history.rebuilt
    assert _mismatches(core, repo, "demo") == []
    core.close()


def test_a_force_push_over_a_blobless_clone_is_recorded_afresh(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    build(repo)
    remote = repo.bare_clone(tmp_path / "demo.git")
    core = _core()
    core.index_repo(f"file://{remote}", name="demo")
    old_head = repo.head()
    git(repo.path, "reset", "-q", "--hard", "HEAD~2")
    repo.write("pkg/functions.py", (repo.path / FILE).read_text() + "def g():\n    return 1\n")
    commit_as(repo, "Rewritten history", "Fay", 1_800_000_000)
    repo.push(remote, force=True)
    report = core.index_repo(f"file://{remote}", name="demo")
    assert report.history is not None and report.history.rewritten and report.history.rebuilt
    recorded = {c.sha for c in core.stores.history.commits("demo")}
    assert old_head not in recorded and repo.head() in recorded
    assert _mismatches(core, repo, "demo") == []
    core.close()


def test_a_horizon_records_the_newest_commits_and_says_what_is_older(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = build(repo)
    core = _core()
    report = core.index_repo(str(repo.path), name="demo", history=HistoryOptions(commits=2))
    assert report.history is not None and report.history.commits == 2
    head = core.stores.history.head("demo")
    assert head is not None and not head.complete
    recorded = [c.sha for c in core.stores.history.commits("demo")]
    assert recorded == [shas["move"], shas["delete"]]
    text = (repo.path / FILE).read_text().splitlines()
    f4 = text.index("def f4(x):") + 1
    assert _ours(core, "demo", FILE, f4 + 1, f4 + 1) == ""  # older than the horizon: no guess
    report = core.index_repo(str(repo.path), name="demo", history=HistoryOptions(enabled=False))
    assert core.stores.history.head("demo") is None
    core.close()


def test_secrets_in_commit_messages_are_redacted(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
    repo.write("a.py", "x = 1\n")
    commit_as(repo, f"Add a\n\nThe deploy token is {token} for now", "Ann", 1_700_000_000)
    core = _core()
    core.index_repo(str(repo.path), name="demo")
    [commit] = core.stores.history.commits("demo")
    assert token not in commit.body and "Add a" in commit.subject
    core.close()
