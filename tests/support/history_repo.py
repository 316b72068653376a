"""A repository whose history has what line attribution must get right: merges (both
sides changing one function), a rename, a commit that moves a function and one that
inserts lines above others, deletions inside a function, and a pull-request subject."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bot.core import Core
from bot.retrieval.history_search import CommitSearch
from tests.support.gitrepo import GitRepo, git

FUNCS = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y\n\n\n" for i in range(8))


def commit_as(repo: GitRepo, message: str, who: str, when: int) -> str:
    """A commit with its own author and dates (so log order is the order made)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who,
        "GIT_AUTHOR_EMAIL": f"{who.lower()}@example.com",
        "GIT_COMMITTER_NAME": who,
        "GIT_COMMITTER_EMAIL": f"{who.lower()}@example.com",
        "GIT_AUTHOR_DATE": f"{when} +0000",
        "GIT_COMMITTER_DATE": f"{when} +0000",
    }
    git(repo.path, "add", "-A")
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", message],
        cwd=repo.path, env=env, check=True, capture_output=True,
    )  # fmt: skip
    return repo.head()


def build(repo: GitRepo, start: int = 1_700_000_000) -> dict[str, str]:
    """Build the history; the shas of its named commits."""
    day = 86_400
    shas: dict[str, str] = {}
    repo.write("pkg/core.py", FUNCS)
    repo.write("README.md", "# demo\n")
    shas["first"] = commit_as(repo, "Add the core functions", "Ann", start)
    text = FUNCS.replace("y = x + 2", "y = x + 20")
    repo.write("pkg/core.py", text)
    shas["tweak"] = commit_as(repo, "Make f2 add twenty (#12)", "Bob", start + day)
    git(repo.path, "checkout", "-q", "-b", "side")
    side = text.replace("y = x + 5", "y = x * 5").replace(
        "    return y\n\n\ndef f6", "    return y + 0\n\n\ndef f6"
    )
    repo.write("pkg/core.py", side)
    shas["side"] = commit_as(repo, "Multiply in f5, fix f5's return", "Cid", start + 2 * day)
    git(repo.path, "checkout", "-q", "main")
    main = text.replace("y = x + 7", "y = x - 7")
    repo.write("pkg/core.py", main)
    shas["main"] = commit_as(repo, "Subtract in f7", "Ann", start + 3 * day)
    env_merge(repo, "side", "Merge pull request #34 from demo/side", start + 4 * day)
    shas["merge"] = repo.head()
    repo.move("pkg/core.py", "pkg/functions.py")
    shas["rename"] = commit_as(repo, "Rename core to functions", "Bob", start + 5 * day)
    moved = (repo.path / "pkg/functions.py").read_text()
    f1 = "def f1(x):\n    y = x + 1\n    return y\n\n\n"
    moved = moved.replace(f1, "") + f1  # f1 moves to the end
    moved = "import os\n\n\n" + moved  # and lines go in above everything
    repo.write("pkg/functions.py", moved)
    shas["move"] = commit_as(repo, "Move f1 to the end, import os", "Cid", start + 6 * day)
    repo.write("pkg/functions.py", moved.replace("    y = x + 3\n", ""))
    shas["delete"] = commit_as(repo, "Drop a line of f3", "Dee", start + 7 * day)
    return shas


def env_merge(repo: GitRepo, branch: str, message: str, when: int) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ann",
        "GIT_AUTHOR_EMAIL": "ann@example.com",
        "GIT_COMMITTER_NAME": "Ann",
        "GIT_COMMITTER_EMAIL": "ann@example.com",
        "GIT_AUTHOR_DATE": f"{when} +0000",
        "GIT_COMMITTER_DATE": f"{when} +0000",
    }
    subprocess.run(
        ["git", "merge", "-q", "--no-ff", "-m", message, branch],
        cwd=repo.path, env=env, check=True, capture_output=True,
    )  # fmt: skip


def git_last_change(path: Path, file: str, start: int, end: int) -> str:
    """What `git log -1 -L` says last changed lines start..end ("" when nothing)."""
    return git(path, "log", "-1", "--format=%H", f"-L{start},{end}:{file}", "--no-patch")


def ranges(lines: int, width: int = 4) -> list[tuple[int, int]]:
    """Every window of up to `width` lines, and the whole file."""
    spans = [(s, min(lines, s + w)) for s in range(1, lines + 1) for w in range(width)]
    return sorted({*spans, (1, lines)})


def recorded_last_change(core: Core, name: str, file: str, start: int, end: int) -> str:
    """What codecite's history store says last changed lines start..end ("" when nothing)."""
    search = CommitSearch(core.stores.history)
    corpus = search.corpus(name)
    assert corpus is not None
    lines = search.lines(name, [file]).get(file)
    found = corpus.touching(lines, start, end)
    return found[0].sha if found else ""


def mismatches(core: Core, repo: GitRepo, name: str, file: str) -> list[tuple[int, int]]:
    """Every window of `file` (and the whole file) where codecite and `git log -1 -L`
    disagree on the last change."""
    count = (repo.path / file).read_text().count("\n")
    return [
        (s, e)
        for s, e in ranges(count)
        if recorded_last_change(core, name, file, s, e) != git_last_change(repo.path, file, s, e)
    ]
