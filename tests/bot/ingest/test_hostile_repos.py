"""Hostile or damaged repositories: each one skips what it must, and never floods the machine.

Every test here runs under a ProcessWatch: a regression that lets git recurse
(as a blobless clone of a shallow source once did, thousands of nested
`git fetch`) is killed at a few dozen processes and fails the test.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.errors import SourceError
from bot.ingest.pipeline import IngestReport
from tests.support.gitrepo import GitRepo, commit_tree, delete_object, git, write_blob, write_tree
from tests.support.isolated_git import _isolated_git  # noqa: F401 -- autouse
from tests.support.processes import ProcessWatch

MakeRepo = Callable[..., GitRepo]
APP = "def checkout_total(cart):\n    return sum(item.price for item in cart)\n"


@pytest.fixture
def watch() -> Iterator[ProcessWatch]:
    with ProcessWatch(kill_above=40) as guard:
        yield guard
    assert not guard.stormed, f"git processes ran away (peak {guard.peak})"


@pytest.fixture
def popen_argvs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """argv of every process codecite starts (git's own children are not seen here)."""
    calls: list[list[str]] = []
    real = subprocess.Popen

    def spy(args: Any, *rest: Any, **kwargs: Any) -> Any:
        calls.append([str(a) for a in args])
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    return calls


def _core() -> Core:
    return Core.from_settings(Settings(), FileConfig())


def _shop(make_repo: MakeRepo, name: str = "shop") -> GitRepo:
    repo = make_repo(name)
    repo.write("shop/cart.py", APP)
    repo.write("shop/tax.py", "def vat(amount):\n    return amount * 0.2\n")
    repo.write("README.md", "# Shop\n")
    repo.commit("first")
    repo.write("shop/tax.py", "def vat(amount):\n    return amount * 0.21\n")
    repo.commit("second")
    return repo


def _cited_paths(core: Core, question: str) -> set[str]:
    return {hit.chunk.path for hit in core.search(question, CLI, top_k=5)}


# --- a shallow source ---------------------------------------------------------------------


def _shallow_bare(repo: GitRepo, dest: Path) -> Path:
    git(repo.path.parent, "clone", "-q", "--bare", "--depth", "1", f"file://{repo.path}", str(dest))
    assert (dest / "shallow").is_file()
    return dest


def test_a_shallow_source_over_file_url_indexes_its_tip_without_a_process_storm(
    make_repo: MakeRepo, tmp_path: Path, watch: ProcessWatch, popen_argvs: list[list[str]]
) -> None:
    repo = _shop(make_repo)
    shallow = _shallow_bare(repo, tmp_path / "shallow.git")
    core = _core()
    popen_argvs.clear()
    report = core.index_repo(f"file://{shallow}", name="shop")
    assert report.commit == repo.head()
    assert report.files == 3 and report.skipped == {}
    assert _cited_paths(core, "checkout_total cart price") >= {"shop/cart.py"}
    # Bounded: a handful of our own git commands (the history's included: a raw listing, a
    # presence check, a fetch, the log, the tags), and git started few of its own.
    assert len(popen_argvs) <= 24, popen_argvs
    assert watch.peak <= 8 and len(watch.seen) <= 30

    # New commits reach the shallow source; the next ingest fetches them into the shallow clone.
    repo.write("shop/cart.py", APP.replace("sum(", "round(sum(").replace("cart)\n", "cart), 2)\n"))
    repo.commit("round")
    git(repo.path, "push", "-q", str(shallow), "HEAD:refs/heads/main")
    again = core.index_repo(f"file://{shallow}", name="shop")
    assert again.commit == repo.head() and again.files_changed == 1
    assert watch.peak <= 8


def test_a_shallow_local_repository_is_read_at_its_tip(
    make_repo: MakeRepo, tmp_path: Path, watch: ProcessWatch
) -> None:
    repo = _shop(make_repo)
    shallow = _shallow_bare(repo, tmp_path / "shallow.git")
    report = _core().index_repo(str(shallow), name="shop")
    assert (report.commit, report.files, report.skipped) == (repo.head(), 3, {})


# --- a blob missing from the repository ---------------------------------------------------


def _damaged(make_repo: MakeRepo, tmp_path: Path) -> tuple[GitRepo, Path, str]:
    """A shop whose bare copy lacks the blob of one file (a large data file, say)."""
    repo = _shop(make_repo)
    repo.write("data/prices.csv", "sku,price\n" + "".join(f"{i},{i * 3}\n" for i in range(500)))
    repo.commit("prices")
    bare = repo.bare_clone(tmp_path / "damaged.git")
    lost = git(bare, "rev-parse", "HEAD:data/prices.csv")
    delete_object(bare, lost)
    assert "missing" in subprocess.run(
        ["git", "cat-file", "--batch-check"], cwd=bare, input=f"{lost}\n", text=True,
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    return repo, bare, lost


def _assert_indexed_but_missing_blob(report: IngestReport, core: Core, head: str) -> None:
    assert report.commit == head
    assert report.skipped == {"missing_blob": 1}
    assert report.files == 3  # cart, tax, README
    assert _cited_paths(core, "checkout_total cart price") >= {"shop/cart.py"}


def test_a_missing_blob_skips_its_file_over_a_file_url(
    make_repo: MakeRepo,
    tmp_path: Path,
    watch: ProcessWatch,
    popen_argvs: list[list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    repo, bare, _ = _damaged(make_repo, tmp_path)
    core = _core()
    popen_argvs.clear()
    report = core.index_repo(f"file://{bare}", name="shop")
    _assert_indexed_but_missing_blob(report, core, repo.head())
    assert "data/prices.csv in shop: blob missing from the repository" in caplog.text
    # The remote refused the batch that held the lost blob, naming it; the rest came next;
    # then the history's one batch (tax.py's first version), without the lost blob again.
    fetches = [argv for argv in popen_argvs if "fetch" in argv and "--stdin" in argv]
    assert len(fetches) == 3, fetches
    assert watch.peak <= 8

    again = core.index_repo(f"file://{bare}", name="shop")  # the clone is reused
    assert again.unchanged and again.skipped == {"missing_blob": 1}


def test_a_missing_blob_skips_its_file_in_a_local_repository(
    make_repo: MakeRepo, tmp_path: Path, watch: ProcessWatch
) -> None:
    repo, bare, lost = _damaged(make_repo, tmp_path)
    core = _core()
    _assert_indexed_but_missing_blob(core.index_repo(str(bare), name="bare"), core, repo.head())
    delete_object(repo.path, lost)  # a working repository, damaged the same way
    _assert_indexed_but_missing_blob(
        core.index_repo(str(repo.path), name="work"), core, repo.head()
    )


def test_a_damaged_repository_leaves_the_others_untouched(
    make_repo: MakeRepo, tmp_path: Path, watch: ProcessWatch
) -> None:
    healthy = make_repo("healthy")
    healthy.write("ledger.py", "def post_entry(book, amount):\n    book.append(amount)\n")
    healthy.commit()
    core = _core()
    first = core.index_repo(str(healthy.path), name="ledger")
    before = {s.name: s for s in core.index.repo_states()}
    _, bare, _ = _damaged(make_repo, tmp_path)
    # A root tree that is gone too: nothing can be listed, one sentence says so.
    root = git(bare, "rev-parse", "HEAD^{tree}")
    delete_object(bare, root)
    with pytest.raises(SourceError) as caught:
        core.index_repo(str(bare), name="broken")
    assert "\n" not in caught.value.user_message
    after = {s.name: s for s in core.index.repo_states()}
    assert after == before and first.files == 1
    assert _cited_paths(core, "post_entry book amount") == {"ledger.py"}


# --- tree entries no checkout would accept ------------------------------------------------

UNSAFE_NAMES = [
    b"..",
    b".",
    b".git",
    b".GIT",
    b"a/b.py",
    b"git~1",
    b"new\nline.py",
    b"back\\slash.py",
]


def _crafted(make_repo: MakeRepo) -> tuple[GitRepo, str]:
    """A commit whose root tree holds every unsafe name (as files and as a directory) and ok.py."""
    repo = _shop(make_repo)
    ok = write_blob(repo.path, b"def harmless():\n    return 'ok'\n")
    evil = write_blob(repo.path, b"def evil():\n    return 'escaped'\n")
    subtree = write_tree(repo.path, [("100644", b"escape.py", evil)])
    rows = [("40000", b"shop", git(repo.path, "rev-parse", "HEAD:shop")), ("100644", b"ok.py", ok)]
    rows += [("100644", name, evil) for name in UNSAFE_NAMES]
    rows += [("40000", b"..", subtree)]  # a directory named `..` as well
    rows += [("100644", b"dup.py", ok), ("100644", b"dup.py", evil)]  # one name twice
    commit = commit_tree(repo.path, write_tree(repo.path, rows))
    return repo, commit


def _assert_unsafe_skipped(report: IngestReport, core: Core) -> None:
    assert report.skipped == {"unsafe_path": len(UNSAFE_NAMES) + 1, "duplicate_path": 1}
    assert report.files == 4  # shop/cart.py, shop/tax.py, ok.py, dup.py (first)
    assert _cited_paths(core, "harmless ok") >= {"ok.py"}
    assert not _cited_paths(core, "evil escaped") - {"dup.py"}


def test_unsafe_tree_entries_are_skipped_in_a_local_repository(
    make_repo: MakeRepo, watch: ProcessWatch
) -> None:
    repo, commit = _crafted(make_repo)
    core = _core()
    report = core.index_repo(str(repo.path), name="crafted")
    assert report.commit == commit
    _assert_unsafe_skipped(report, core)


def test_unsafe_tree_entries_are_skipped_over_a_file_url(
    make_repo: MakeRepo, tmp_path: Path, watch: ProcessWatch
) -> None:
    repo, commit = _crafted(make_repo)
    bare = repo.bare_clone(tmp_path / "crafted.git")
    core = _core()
    report = core.index_repo(f"file://{bare}", name="crafted")
    assert report.commit == commit
    _assert_unsafe_skipped(report, core)
    assert not (tmp_path / "home" / "repos" / "crafted" / "escape.py").exists()


def test_several_missing_blobs_cost_one_refused_fetch_each(
    make_repo: MakeRepo, tmp_path: Path, watch: ProcessWatch, popen_argvs: list[list[str]]
) -> None:
    repo = make_repo("many")
    for i in range(40):
        repo.write(f"pkg/mod{i:02}.py", f"def handler_{i}():\n    return {i}\n")
    repo.commit()
    bare = repo.bare_clone(tmp_path / "many.git")
    for i in (3, 17, 31):
        delete_object(bare, git(bare, "rev-parse", f"HEAD:pkg/mod{i:02}.py"))
    core = _core()
    popen_argvs.clear()
    report = core.index_repo(f"file://{bare}", name="many")
    assert report.files == 37 and report.skipped == {"missing_blob": 3}
    fetches = [argv for argv in popen_argvs if "fetch" in argv and "--stdin" in argv]
    assert len(fetches) == 4  # three refusals, each naming its blob, then the rest
    assert core.search("handler_18", CLI, top_k=1)[0].chunk.path == "pkg/mod18.py"
    assert watch.peak <= 8


def test_a_tree_bomb_is_refused_in_one_sentence_without_expanding_it(
    make_repo: MakeRepo, watch: ProcessWatch
) -> None:
    repo = _shop(make_repo)
    blob = write_blob(repo.path, b"x = 1\n")
    tree = write_tree(repo.path, [("100644", f"f{i}.py".encode(), blob) for i in range(10)])
    for _ in range(9):  # ten levels of ten copies: 10**10 paths from 10 objects
        tree = write_tree(repo.path, [("40000", f"d{i}".encode(), tree) for i in range(10)])
    commit_tree(repo.path, tree)
    before = _core()
    with pytest.raises(SourceError) as caught:
        before.index_repo(str(repo.path), name="bomb")
    assert "more than 2,000,000 entries" in caught.value.user_message
    assert before.index.repo_states() == []


def test_damaged_and_odd_subtrees_skip_only_themselves(
    make_repo: MakeRepo, watch: ProcessWatch
) -> None:
    repo = _shop(make_repo)
    ok = write_blob(repo.path, b"def harmless():\n    return 'ok'\n")
    padded = write_tree(repo.path, [("100644", b"inner.py", ok)])
    lost = write_tree(repo.path, [("100644", b"lost.py", write_blob(repo.path, b"lost = 1\n"))])
    truncated = write_blob(repo.path, b"100644 cut.py\0\x01\x02")  # a blob posing as a tree
    rows = [("100644", b"ok.py", ok), ("040000", b"padded", padded), ("40000", b"lost", lost)]
    rows += [("40000", b"fake", truncated), ("100644", "café.py".encode(), ok)]
    commit_tree(repo.path, write_tree(repo.path, rows))
    delete_object(repo.path, lost)
    report = _core().index_repo(str(repo.path), name="odd")
    assert report.skipped == {"missing_tree": 1, "bad_tree": 1}
    assert report.files == 3  # ok.py, padded/inner.py, café.py
