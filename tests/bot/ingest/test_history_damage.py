"""History from damaged repositories (issue 25): a lost blob, a lost tree, a lost commit
and a `git log` stopped by its deadline cost only the commits git cannot read; the other
commits and every line git can follow are recorded as `git log -L` says, the code index
is whole, `status` says what was lost in one line, and restoring the object fills it in."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

from bot.config import FileConfig, Settings
from bot.context import CLI
from bot.core import Core
from bot.ingest import git as gitmod
from bot.ingest.git import Git, GitLimits
from bot.ingest.history import GitAccess, HistoryOptions, HistorySync
from bot.store.history_unread import split_horizon
from tests.support.gitrepo import GitRepo, git
from tests.support.history_repo import commit_as, git_last_change, ranges, recorded_last_change

LINES = "".join(f"line {i}\n" for i in range(1, 13))
FILES = ("a.py", "b.py")


def _story(repo: GitRepo) -> dict[str, str]:
    """Six commits; a.py and b.py changed in turn, so a lost version of a.py costs only
    the commits that read it."""
    start, day = 1_700_000_000, 86_400
    shas: dict[str, str] = {}
    a, b = LINES, LINES
    repo.write("a.py", a)
    repo.write("b.py", b)
    shas["add"] = commit_as(repo, "Add both files", "Ann", start)
    steps = [("a2", "a.py", 3), ("b3", "b.py", 5), ("a4", "a.py", 7), ("b5", "b.py", 8)]
    steps.append(("a6", "a.py", 1))
    for n, (name, path, line) in enumerate(steps, start=1):
        text = (repo.path / path).read_text()
        repo.write(path, text.replace(f"line {line}\n", f"line {line} by {name}\n"))
        shas[name] = commit_as(repo, f"Change {path} line {line}", name.upper(), start + n * day)
    return shas


def _truth(repo: GitRepo) -> dict[tuple[str, int, int], str]:
    """What git says last changed every window, read while the repository is whole."""
    return {(f, s, e): git_last_change(repo.path, f, s, e) for f in FILES for s, e in ranges(12, 3)}


def _object_file(repo: GitRepo, oid: str) -> Path:
    return repo.path / ".git" / "objects" / oid[:2] / oid[2:]


def _ours(core: Core, name: str) -> dict[tuple[str, int, int], str]:
    return {
        (f, s, e): recorded_last_change(core, name, f, s, e)
        for f in FILES
        for s, e in ranges(12, 3)
    }


def _core() -> Core:
    return Core.from_settings(Settings(), FileConfig())


def _wrong(ours: dict[tuple[str, int, int], str], truth: dict[tuple[str, int, int], str]) -> list:  # type: ignore[type-arg]
    """Windows credited to a commit git does not name ("" is honest: not followed)."""
    return [k for k, sha in ours.items() if sha and sha != truth[k]]


def test_a_lost_blob_costs_only_the_commits_that_read_it(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = _story(repo)
    truth = _truth(repo)
    blob = git(repo.path, "rev-parse", f"{shas['a2']}:a.py")
    lost = _object_file(repo, blob)
    kept = tmp_path / "kept-object"
    shutil.move(lost, kept)  # a.py as a2 left it: a2 and a4 cannot be diffed
    core = _core()
    report = core.index_repo(str(repo.path), name="demo")
    history = report.history
    assert history is not None and not history.failed
    assert history.commits == 6  # every commit is recorded
    assert history.unread.count == 2 and set(history.unread.shas) == {shas["a2"], shas["a4"]}
    assert blob[:12] in history.unread.reason
    records = {c.sha: c for c in core.stores.history.commits("demo")}
    assert records[shas["a2"]].paths == ("a.py",) and records[shas["a2"]].ranges == ""
    assert records[shas["b3"]].ranges == "b.py:5-5"  # the readable ones are whole
    ours = _ours(core, "demo")
    assert _wrong(ours, truth) == []
    assert all(ours[k] == truth[k] for k in ours if k[0] == "b.py")  # b.py: exact
    assert ours[("a.py", 1, 1)] == shas["a6"]  # a.py: what came after the damage
    assert ours[("a.py", 3, 3)] == ""  # not credited to "add", which git would not name
    assert report.files == 2 and core.search("line", CLI)  # index whole
    status = core.run_command("status", CLI).text
    assert "2 commits could not be read" in status and blob[:12] in status
    shutil.move(kept, lost)  # restored: the next ingest fills them in
    again = core.index_repo(str(repo.path), name="demo")
    assert again.history is not None and again.history.rebuilt and not again.history.unread
    assert _ours(core, "demo") == truth
    assert "could not be read" not in core.run_command("status", CLI).text
    core.close()


def test_a_lost_blob_still_lost_is_not_read_again(make_repo, caplog) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = _story(repo)
    _object_file(repo, git(repo.path, "rev-parse", f"{shas['a2']}:a.py")).unlink()
    core = _core()
    caplog.set_level(logging.WARNING)
    first = core.index_repo(str(repo.path), name="demo")
    assert first.history is not None and first.history.unread.count == 2
    lines = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0] and "Traceback" not in caplog.text
    again = core.index_repo(str(repo.path), name="demo")
    assert again.history is not None and not again.history.rebuilt
    assert again.history.unread.count == 2  # still noted, nothing read again
    # A new commit is added incrementally; the old damage stays noted.
    repo.write("b.py", (repo.path / "b.py").read_text() + "line 13\n")
    new = commit_as(repo, "Grow b.py", "Gus", 1_800_000_000)
    grown = core.index_repo(str(repo.path), name="demo")
    assert grown.history is not None and grown.history.commits_added == 1
    assert grown.history.unread.count == 2
    assert recorded_last_change(core, "demo", "b.py", 13, 13) == new
    core.close()


def test_a_lost_tree_cuts_the_lines_of_the_commits_it_hides(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = _story(repo)
    truth = _truth(repo)
    _object_file(repo, git(repo.path, "rev-parse", f"{shas['b3']}^{{tree}}")).unlink()
    core = _core()
    report = core.index_repo(str(repo.path), name="demo")
    assert report.history is not None and report.history.commits == 6
    assert set(report.history.unread.shas) == {shas["b3"], shas["a4"]}
    ours = _ours(core, "demo")
    assert _wrong(ours, truth) == []
    assert ours[("b.py", 8, 8)] == shas["b5"] and ours[("a.py", 1, 1)] == shas["a6"]
    assert ours[("a.py", 3, 3)] == ""  # before the blind commits: not followed
    core.close()


def test_a_lost_commit_ends_the_history_there(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = _story(repo)
    truth = _truth(repo)
    lost = _object_file(repo, shas["b3"])
    kept = lost.read_bytes()
    lost.unlink()
    core = _core()
    report = core.index_repo(str(repo.path), name="demo")
    history = report.history
    assert history is not None and not history.failed
    recorded = {c.sha for c in core.stores.history.commits("demo")}
    assert recorded == {shas["b5"], shas["a6"]}  # a4 names the lost commit as its parent
    assert history.unread and shas["b3"][:12] in history.unread.reason
    head = core.stores.history.head("demo")
    assert head is not None and not head.complete
    ours = _ours(core, "demo")
    assert _wrong(ours, truth) == []
    assert ours[("b.py", 8, 8)] == shas["b5"] and ours[("a.py", 1, 1)] == shas["a6"]
    lost.write_bytes(kept)  # restored: the whole history is read
    again = core.index_repo(str(repo.path), name="demo")
    assert again.history is not None and again.history.commits == 6 and not again.history.unread
    assert _ours(core, "demo") == truth
    core.close()


def test_a_git_log_past_its_deadline_records_the_commits_without_changes(  # type: ignore[no-untyped-def]
    make_repo, tmp_path: Path
) -> None:
    """A diff git takes long over (every line of a big file replaced, many times) runs
    past the deadline of issue 12's hardening; the listing reads no diff and is quick."""
    repo = make_repo("big")
    for n in range(6):
        repo.write("big.txt", "".join(f"{n}-{i}-{i * n % 97}\n" for i in range(150_000)))
        commit_as(repo, f"Rewrite big.txt ({n})", "Ann", 1_700_000_000 + n)
    from bot.store.history import SqliteHistory

    store = SqliteHistory(tmp_path / "history.sqlite")
    head = repo.head()
    old = gitmod.limits()
    gitmod.configure(GitLimits(quick_timeout=0.5))
    try:
        report = HistorySync(store, "big").run(
            GitAccess(Git(repo.path), None), head, HistoryOptions()
        )
    finally:
        gitmod.configure(old)
    assert not report.failed and report.commits == 6
    assert report.unread.count == 6 and "timed out" in report.unread.reason
    recorded = store.head("big")
    assert recorded is not None and split_horizon(recorded.horizon)[1].count == 6
    # With time enough, the next run reads them all.
    again = HistorySync(store, "big").run(GitAccess(Git(repo.path), None), head, HistoryOptions())
    assert again.rebuilt and not again.unread
    assert all(c.ranges for c in store.commits("big"))
    store.close()


def test_a_blob_the_promisor_cannot_give_costs_only_its_commits(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = _story(repo)
    truth = _truth(repo)
    remote = repo.bare_clone(tmp_path / "demo.git")
    blob = git(remote, "rev-parse", f"{shas['a2']}:a.py")
    git(remote, "repack", "-a", "-d", "-q")  # one pack, then that blob taken out of it
    packed = git(remote, "rev-list", "--objects", "--all").split("\n")
    others = "\n".join(line.split()[0] for line in packed if not line.startswith(blob))
    (tmp_path / "new").mkdir()
    subprocess.run(
        ["git", "pack-objects", "-q", str(tmp_path / "new" / "pack")],
        cwd=remote, input=others + "\n", text=True, check=True, capture_output=True,
    )  # fmt: skip
    pack = remote / "objects" / "pack"
    for old in pack.iterdir():
        old.unlink()
    for new in (tmp_path / "new").iterdir():
        shutil.move(new, pack / new.name)
    assert git(remote, "cat-file", "-t", shas["a2"]) == "commit"
    core = _core()
    report = core.index_repo(f"file://{remote}", name="demo")
    history = report.history
    assert history is not None and not history.failed and history.commits == 6
    assert set(history.unread.shas) == {shas["a2"], shas["a4"]}
    ours = _ours(core, "demo")
    assert _wrong(ours, truth) == []
    assert all(ours[k] == truth[k] for k in ours if k[0] == "b.py")
    core.close()


def test_a_merge_whose_side_cannot_be_read_loses_only_its_lines(make_repo) -> None:  # type: ignore[no-untyped-def]
    """The merge's diff against its first parent reads; against the side branch it
    cannot (the side's version of a.py is lost): the merge joins the unread."""
    from tests.support.history_repo import env_merge

    repo = make_repo("demo")
    start, day = 1_700_000_000, 86_400
    repo.write("a.py", LINES)
    repo.write("b.py", LINES)
    commit_as(repo, "Add both files", "Ann", start)
    git(repo.path, "checkout", "-q", "-b", "side")
    repo.write("a.py", LINES.replace("line 2\n", "line 2 on the side\n"))
    side = commit_as(repo, "Side: a.py line 2", "Bob", start + day)
    git(repo.path, "checkout", "-q", "main")
    repo.write("a.py", LINES.replace("line 10\n", "line 10 on main\n"))
    main = commit_as(repo, "Main: a.py line 10", "Cid", start + 2 * day)
    env_merge(repo, "side", "Merge pull request #7 from demo/side", start + 3 * day)
    merge = repo.head()
    repo.write("b.py", LINES.replace("line 4\n", "line 4 later\n"))
    later = commit_as(repo, "b.py line 4", "Dee", start + 4 * day)
    truth = _truth(repo)
    _object_file(repo, git(repo.path, "rev-parse", f"{side}:a.py")).unlink()
    core = _core()
    report = core.index_repo(str(repo.path), name="demo")
    history = report.history
    assert history is not None and not history.failed and history.commits == 5
    assert set(history.unread.shas) == {side, merge}
    records = {c.sha: c for c in core.stores.history.commits("demo")}
    assert records[main].ranges == "a.py:10-10" and records[later].ranges == "b.py:4-4"
    ours = _ours(core, "demo")
    assert _wrong(ours, truth) == []
    assert ours[("b.py", 4, 4)] == later
    core.close()


def test_a_corrupt_object_is_damage_like_a_lost_one(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = _story(repo)
    blob = _object_file(repo, git(repo.path, "rev-parse", f"{shas['a2']}:a.py"))
    blob.chmod(0o644)
    blob.write_bytes(b"x\x9c not zlib at all")  # a loose object that no longer inflates
    core = _core()
    report = core.index_repo(str(repo.path), name="demo")
    history = report.history
    assert history is not None and not history.failed and history.commits == 6
    assert set(history.unread.shas) == {shas["a2"], shas["a4"]}
    assert "missing or corrupt" in history.unread.reason
    core.close()
