"""What the history leaves out to stay cheap, and that nothing it must hold goes with it:
lockfiles and binaries are named by their commits but not diffed, line states are kept
for indexed files only (followed back through a rename from a path the index does not
keep), and merges diffed in groups stay exact against `git log -1 -L`."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bot.config import FileConfig, Settings
from bot.core import Core
from bot.ingest.filters import path_reason
from bot.ingest.history_log import RawCommit
from bot.ingest.history_skips import attributes_text, lines_needed, undiffed_skips
from bot.retrieval.history_search import CommitSearch
from tests.support.gitrepo import GitRepo, git
from tests.support.history_repo import commit_as, env_merge, git_last_change, ranges

LOCK = "".join(f'name = "dep{i}"\nversion = "1.{i}"\n' for i in range(40))


def _core() -> Core:
    return Core.from_settings(Settings(), FileConfig())


def _mismatches(core: Core, repo: GitRepo, name: str, file: str) -> list[tuple[int, int]]:
    search = CommitSearch(core.stores.history)
    corpus = search.corpus(name)
    assert corpus is not None
    lines = search.lines(name, [file]).get(file)
    count = (repo.path / file).read_text().count("\n")
    wrong = []
    for start, end in ranges(count):
        found = corpus.touching(lines, start, end)
        ours = found[0].sha if found else ""
        if ours != git_last_change(repo.path, file, start, end):
            wrong.append((start, end))
    return wrong


def test_every_undiffed_pattern_names_only_files_the_index_skips() -> None:
    examples = {
        "uv.lock": "sub/uv.lock",
        "*.png": "img/logo.png",
        "*_pb2.py": "api/service_pb2.py",
        "*.min.*": "static/app.min.js",
        "*.generated.*": "src/schema.generated.ts",
    }
    patterns = [line.split()[0] for line in attributes_text().splitlines()]
    for pattern, path in examples.items():
        assert pattern in patterns
        assert path_reason(path) is not None, path
    assert "*.py" not in patterns and "*.md" not in patterns


def test_the_attributes_reach_git_and_are_gone_afterwards(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    repo.write("uv.lock", LOCK)
    repo.write("a.py", "x = 1\n")
    repo.commit("add")
    with undiffed_skips() as config:
        name = config[1].split("=", 1)[1]
        out = git(repo.path, *config, "show", "--format=", "-p", "HEAD")
        assert Path(name).is_file()
    assert not Path(name).exists()
    assert "Binary files /dev/null and b/uv.lock differ" in out and "+x = 1" in out


def test_without_a_writable_temp_dir_every_file_is_diffed(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    with undiffed_skips() as config:
        assert config == ()


def test_lockfiles_are_named_not_diffed_and_code_lines_stay_exact(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    repo.write("uv.lock", LOCK)
    repo.write("app.py", "def main():\n    return 1\n")
    commit_as(repo, "Start", "Ann", 1_700_000_000)
    repo.write("uv.lock", LOCK.replace('"1.7"', '"2.0"'))
    repo.write("app.py", "def main():\n    return 2\n\n\ndef other():\n    return 3\n")
    bump = commit_as(repo, "Bump dep7, main returns 2", "Bob", 1_700_100_000)
    core = _core()
    core.index_repo(str(repo.path), name="demo")
    commit = next(c for c in core.stores.history.commits("demo") if c.sha == bump)
    assert "uv.lock" in commit.paths and "app.py" in commit.paths
    assert "app.py:" in commit.ranges and "uv.lock" not in commit.ranges
    assert "uv.lock" not in core.stores.history.file_lines("demo", ["uv.lock", "app.py"])
    assert _mismatches(core, repo, "demo", "app.py") == []
    core.close()


def test_a_file_renamed_from_a_path_the_index_skips_keeps_its_history(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(6))
    repo.write("tool.in", body)  # not a language the index reads
    repo.write("data.svg", "<svg>\n</svg>\n")
    first = commit_as(repo, "Add the tool as a template", "Ann", 1_700_000_000)
    repo.write("tool.in", body.replace("return 3", "return 33"))
    commit_as(repo, "Change f3", "Bob", 1_700_100_000)
    repo.move("tool.in", "tool.py")
    commit_as(repo, "The tool is Python now", "Cid", 1_700_200_000)
    repo.write("tool.py", (repo.path / "tool.py").read_text().replace("return 5", "return 55"))
    commit_as(repo, "Change f5", "Dee", 1_700_300_000)
    core = _core()
    core.index_repo(str(repo.path), name="demo")
    kept = core.stores.history.file_lines("demo", ["tool.py", "data.svg", "tool.in"])
    assert set(kept) == {"tool.py"}  # only what the index holds at the head
    assert _mismatches(core, repo, "demo", "tool.py") == []
    search = CommitSearch(core.stores.history)
    corpus = search.corpus("demo")
    assert corpus is not None
    found = corpus.touching(search.lines("demo", ["tool.py"])["tool.py"], 1, 2)
    assert found and found[0].sha == first  # f0, through the rename from tool.in
    core.close()


def test_lines_needed_follows_renames_back_through_the_commits() -> None:
    def commit(sha: str, *renames: tuple[str, str]) -> RawCommit:
        from bot.ingest.history_log import FileDiff

        diffs = [FileDiff(old, new) for old, new in renames]
        return RawCommit(sha, (), "", "", 0, 0, "", "", diffs)

    commits = [commit("1", ("a.in", "b.txt")), commit("2", ("b.txt", "c.py")), commit("3")]
    assert lines_needed(commits, {"c.py"}) == {"a.in", "b.txt", "c.py"}
    assert lines_needed(commits, {"x.py"}) == {"x.py"}


def test_merges_that_need_different_files_stay_exact(make_repo) -> None:  # type: ignore[no-untyped-def]
    """Several merges in one batch, each with files changed on both sides and files it
    took from one side, so that a file one merge needs is one another merge must not
    have diffed; every line still says what git says."""
    repo = make_repo("demo")
    files = {
        name: "".join(f"def {name[0]}{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
        for name in ("alpha.py", "beta.py", "gamma.py")
    }
    for name, text in files.items():
        repo.write(name, text)
    when = 1_700_000_000
    commit_as(repo, "Start", "Ann", when)
    for round_, (both, one_side) in enumerate(  # changed on both sides, on the topic only
        [("alpha.py", "beta.py"), ("beta.py", "gamma.py"), ("gamma.py", "alpha.py")]
    ):
        when += 10_000
        branch = f"topic{round_}"
        git(repo.path, "checkout", "-q", "-b", branch)
        for name, old in ((both, "+ 1\n"), (one_side, "+ 6\n")):
            text = (repo.path / name).read_text().replace(old, f"+ {round_}1\n", 1)
            repo.write(name, text)
        commit_as(repo, f"Topic {round_}", "Bob", when)
        git(repo.path, "checkout", "-q", "main")
        (third,) = set(files) - {both, one_side}  # changed on main only: the merge takes it
        for name, old in ((both, "+ 4\n"), (third, "+ 7\n")):
            text = (repo.path / name).read_text().replace(old, f"+ {round_}{old[2:]}", 1)
            repo.write(name, text)
        commit_as(repo, f"Main {round_}", "Cid", when + 1)
        env_merge(repo, branch, f"Merge pull request #{round_ + 1} from demo/{branch}", when + 2)
    log = subprocess.run(
        ["git", "log", "--merges", "--format=%H"], cwd=repo.path, capture_output=True, text=True
    )
    assert len(log.stdout.split()) == 3
    core = _core()
    core.index_repo(str(repo.path), name="demo")
    for name in files:
        assert _mismatches(core, repo, "demo", name) == [], name
    core.close()
