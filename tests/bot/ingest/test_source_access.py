"""`codecite index PATH` on a checkout the user it runs as cannot read (issue 27): one line
naming the path that refused, exit 2, no incident and no traceback, from the directory source
and the git source alike. A readable repository owned by someone else, as a mounted checkout
is inside a container, is indexed (git alone would refuse it as "dubious ownership").

Without a container: see tests/support/unprivileged.py for how the child is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gitrepo import GitRepo
from tests.support.paths import ROOT
from tests.support.unprivileged import Denials, denials, give_away, unprivileged

__all__ = ["denials"]  # the fixture, imported to be found


def index(home: Path, path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODECITE_HOME": str(home), "COLUMNS": "300"}
    return subprocess.run(
        unprivileged([sys.executable, "-m", "adapters.cli.main", "index", str(path)]),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def refused(done: subprocess.CompletedProcess[str], home: Path, path: Path) -> None:
    """The one line naming `path`, and nothing of an incident anywhere."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.splitlines() == [
        f"error: {path} cannot be read by the user codecite runs as (uid {os.geteuid()}); "
        "make it readable to that user, or run codecite as its owner."
    ], done.stderr
    logs = "".join(p.read_text(errors="replace") for p in home.rglob("*.log"))
    for text in (done.stdout, done.stderr, logs):
        assert "Traceback" not in text and "incident" not in text and "PermissionError" not in text


def a_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "src")
    repo.write("shop/cart.py", "def total(items):\n    return sum(items)\n")
    repo.commit("cart")
    return repo


def a_directory(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "cart.py").write_text("def total(items):\n    return sum(items)\n")
    return root


@pytest.mark.parametrize("kind", ["directory", "git"])
def test_a_checkout_that_cannot_be_listed_is_named(
    tmp_path: Path, denials: Denials, kind: str
) -> None:
    root = a_directory(tmp_path) if kind == "directory" else a_repo(tmp_path).path
    denials.deny(root)
    home = tmp_path / "home"
    refused(index(home, root), home, root)


@pytest.mark.parametrize("inner", [".git", ".git/objects"])
def test_a_git_directory_that_cannot_be_read_is_named(
    tmp_path: Path, denials: Denials, inner: str
) -> None:
    repo = a_repo(tmp_path)
    denials.deny(repo.path / inner)
    home = tmp_path / "home"
    refused(index(home, repo.path), home, repo.path / inner)


@pytest.mark.parametrize("kind", ["directory", "git"])
def test_a_parent_that_cannot_be_entered_is_named(
    tmp_path: Path, denials: Denials, kind: str
) -> None:
    """`/mnt/private/src` where `/mnt/private` refuses: the parent is what to fix."""
    outer = tmp_path / "private"
    outer.mkdir()
    root = a_directory(outer) if kind == "directory" else a_repo(outer).path
    denials.deny(outer)
    home = tmp_path / "home"
    refused(index(home, root), home, outer)


def probe(path: Path) -> str:
    """The scheduler's quick check (which commit is this checkout at?), from a refused child."""
    code = "import sys; from bot.ingest.probe import current_commit as c; print(c(sys.argv[1], None, None))"
    done = subprocess.run(
        unprivileged([sys.executable, "-c", code, str(path)]),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.strip()


def test_a_readable_repository_owned_by_another_user_is_indexed(tmp_path: Path) -> None:
    """A checkout mounted into a container belongs to the host's user, not the container's."""
    repo = a_repo(tmp_path)
    head = repo.head()
    give_away(repo.path)
    home = tmp_path / "home"
    done = index(home, repo.path)
    assert done.returncode == 0, done.stderr
    assert f"main@{head[:12]}" in done.stdout and "1 indexed" in done.stdout
    assert probe(repo.path) == head  # the scheduler's quick check sees its commit too


def test_the_quick_check_of_a_checkout_it_cannot_enter_is_no_answer(
    tmp_path: Path, denials: Denials
) -> None:
    """No answer (so the ingest that follows runs, and names the path), not an error."""
    outer = tmp_path / "private"
    outer.mkdir()
    repo = a_repo(outer)
    assert probe(repo.path) == repo.head()
    denials.deny(outer)
    assert probe(repo.path) == "None"
