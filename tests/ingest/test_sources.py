from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.errors import SourceError
from bot.ingest import sources
from bot.ingest.catfile import BlobReader
from bot.ingest.filters import VerdictMemo
from bot.ingest.sources import (
    Source,
    SourceFile,
    default_name,
    git_blob_sha,
    open_source,
)
from tests.support.gitrepo import GitRepo, git

MakeRepo = Callable[..., GitRepo]
TOKEN = "ghp_NeverShowThisToken0123456789"


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-gitconfig"))
    # Verdicts are remembered per process; each test starts from a clean memory.
    monkeypatch.setattr(sources, "MEMO", VerdictMemo(1000))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def listing(source: Source) -> dict[str, str]:
    """path -> text, for every file the source lists."""
    files = list(source.files())
    return {f.path: text for f, text in source.read_many(files)}


def committed_blob(repo: GitRepo, path: str, rev: str = "HEAD") -> str:
    return git(repo.path, "rev-parse", f"{rev}:{path}")


# --- local git repositories ---------------------------------------------------------------


def test_local_repo_lists_head_from_git_objects(make_repo: MakeRepo, home: Path) -> None:
    repo = make_repo("proj")
    repo.write("src/app.py", "def run():\n    return 1\n")
    repo.write("README.md", "# Proj\n")
    repo.write(".gitignore", "*.log\n")
    head = repo.commit("first")
    git(repo.path, "remote", "add", "origin", "git@github.com:acme/proj.git")
    repo.write("src/app.py", "def run():\n    return 'uncommitted'\n")  # edit in the work tree
    repo.write("scratch.py", "untracked = True\n")
    repo.write("debug.log", "ignored\n")

    source = open_source(str(repo.path), home=home)
    files = list(source.files())
    assert [f.path for f in files] == [".gitignore", "README.md", "src/app.py"]
    assert all(f.blob == committed_blob(repo, f.path) for f in files)
    assert source.read_text(files[2]) == "def run():\n    return 1\n"
    checkout = source.checkout
    assert (checkout.name, checkout.commit, checkout.branch) == ("proj", head, "main")
    assert checkout.root == repo.path.resolve() and checkout.source == str(repo.path.resolve())
    assert checkout.web_url == "https://github.com/acme/proj"


def test_local_repo_specific_branch(make_repo: MakeRepo, home: Path) -> None:
    repo = make_repo()
    repo.write("a.py", "main = 1\n")
    repo.commit()
    git(repo.path, "checkout", "-q", "-b", "feature")
    repo.write("b.py", "feature = 1\n")
    feature = repo.commit()
    git(repo.path, "checkout", "-q", "main")

    source = open_source(str(repo.path), home=home, branch="feature", name="proj")
    assert (source.checkout.branch, source.checkout.commit) == ("feature", feature)
    assert listing(source) == {"a.py": "main = 1\n", "b.py": "feature = 1\n"}
    assert source.checkout.web_url == ""
    with pytest.raises(SourceError, match="Branch 'nope' was not found"):
        open_source(str(repo.path), home=home, branch="nope")
    with pytest.raises(SourceError, match="not a valid branch name"):
        open_source(str(repo.path), home=home, branch="--upload-pack=evil")


def test_renames_and_deletions_across_commits(make_repo: MakeRepo, home: Path) -> None:
    repo = make_repo()
    repo.write("old/name.py", "x = 1\n")
    repo.write("gone.py", "y = 2\n")
    repo.write("kept.py", "z = 3\n")
    repo.commit()
    first = {f.path: f.blob for f in open_source(str(repo.path), home=home).files()}
    repo.move("old/name.py", "new/name.py")
    repo.remove("gone.py")
    repo.commit("rename and delete")
    second = {f.path: f.blob for f in open_source(str(repo.path), home=home).files()}
    assert set(first) == {"gone.py", "kept.py", "old/name.py"}
    assert set(second) == {"kept.py", "new/name.py"}
    assert second["new/name.py"] == first["old/name.py"]


def test_empty_repo_is_an_error(make_repo: MakeRepo, home: Path) -> None:
    repo = make_repo()
    with pytest.raises(SourceError, match="has no commits yet"):
        open_source(str(repo.path), home=home)


def test_bare_local_repo(make_repo: MakeRepo, home: Path, tmp_path: Path) -> None:
    repo = make_repo()
    repo.write("a.py", "a = 1\n")
    repo.commit()
    bare = repo.bare_clone(tmp_path / "bare.git")
    source = open_source(str(bare), home=home)
    assert source.checkout.name == "bare"
    assert listing(source) == {"a.py": "a = 1\n"}


# --- what is skipped, and why -------------------------------------------------------------


def test_skip_reasons_are_counted(make_repo: MakeRepo, home: Path, tmp_path: Path) -> None:
    repo = make_repo()
    repo.write("src/app.py", "def f():\n    return 1\n")
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n" + bytes(64))
    repo.write("data/blob.txt", b"text then \0 binary")
    repo.write("data/huge.sql", "insert into t values (1);\n" * 400)  # ~10 KB
    repo.write("vendor/lib/x.go", "package x\n")
    repo.write("api/user_pb2.py", "x = 1\n")
    repo.write("gen/api.go", "// Code generated by protoc. DO NOT EDIT.\npackage api\n")
    repo.write("web/app.js", "var a=1;" * 400)
    repo.write("package-lock.json", "{}\n")
    repo.write(".env", "SECRET=1\n")
    repo.write("certs/server.pem", "-----BEGIN CERTIFICATE-----\n")
    repo.write("latin1.py", "caf\xe9 = 1\n".encode("latin-1"))
    os.symlink("/etc/passwd", repo.path / "escape")
    other = make_repo("other")
    other.write("o.txt", "o\n")
    sub_head = other.commit()
    repo.commit()
    git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{sub_head},libs/sub")
    git(repo.path, "commit", "-q", "-m", "add a submodule")

    source = open_source(str(repo.path), home=home, max_file_bytes=4000)
    texts = listing(source)
    assert sorted(texts) == ["latin1.py", "src/app.py"]
    assert texts["latin1.py"] == "caf\ufffd = 1\n"
    assert source.skipped() == {
        "binary": 2,
        "too_large": 1,
        "vendored": 1,
        "generated": 2,
        "minified": 1,
        "lockfile": 1,
        "secret_file": 2,
        "symlink": 1,
        "submodule": 1,
    }


def test_include_and_exclude(make_repo: MakeRepo, home: Path) -> None:
    repo = make_repo()
    for path in ["src/a.py", "src/deep/b.py", "src/c.md", "docs/d.md", "tests/test_a.py"]:
        repo.write(path, f"# {path}\n")
    repo.commit()
    source = open_source(
        str(repo.path), home=home, include=["src/**", "*.md"], exclude=["src/deep"]
    )
    assert [f.path for f in source.files()] == ["docs/d.md", "src/a.py", "src/c.md"]
    assert source.skipped() == {"excluded": 2}


def test_second_listing_reuses_verdicts_without_reading(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo()
    repo.write("a.py", "a = 1\n")
    repo.write("bin.txt", b"\0\0")
    repo.commit()
    first = open_source(str(repo.path), home=home)
    listed = list(first.files())

    requested: list[str] = []  # every object asked of cat-file --batch
    real = BlobReader.read_objects

    def spy(self: BlobReader, oids: Any) -> Any:
        wanted = list(oids)
        requested.extend(wanted)
        return real(self, wanted)

    monkeypatch.setattr(BlobReader, "read_objects", spy)
    second = open_source(str(repo.path), home=home)
    assert list(second.files()) == listed
    assert second.skipped() == {"binary": 1}
    blobs = {committed_blob(repo, "a.py"), committed_blob(repo, "bin.txt")}
    assert requested and not blobs & set(requested)  # trees were read, no blob
    assert second.read_text(listed[0]) == "a = 1\n"  # read on demand
    assert blobs & set(requested)


def test_files_can_be_listed_again_after_an_abandoned_listing(
    make_repo: MakeRepo, home: Path
) -> None:
    repo = make_repo()
    for i in range(60):
        repo.write(f"m{i:02}.py", f"v = {i}\n")
    repo.commit()
    source = open_source(str(repo.path), home=home)
    partial = source.files()
    next(partial)
    partial.close()
    texts = listing(source)
    assert len(texts) == 60 and texts["m59.py"] == "v = 59\n"
    fresh = open_source(str(repo.path), home=home)
    files = [SourceFile(f.path, f.blob, f.size) for f in fresh.files()]
    fresh.close()  # drops the held bytes: everything is read from git again, in order
    assert [text for _, text in fresh.read_many(files[::-1])] == [
        texts[f.path] for f in files[::-1]
    ]


# --- remote repositories ------------------------------------------------------------------


@pytest.fixture
def upstream(make_repo: MakeRepo, tmp_path: Path) -> tuple[GitRepo, Path]:
    work = make_repo("upstream")
    work.write("app.py", "def main():\n    return 1\n")
    work.write("old.py", "old = True\n")
    work.commit("first")
    work.write("app.py", "def main():\n    return 2\n")
    work.commit("second")
    bare = work.bare_clone(tmp_path / "remote" / "shop.git")
    git(bare, "config", "uploadpack.allowFilter", "true")  # as GitHub and GitLab do
    return work, bare


def test_remote_is_cloned_blobless_and_fetched_again(
    upstream: tuple[GitRepo, Path], home: Path
) -> None:
    work, bare = upstream
    source = open_source(f"file://{bare}", home=home)
    clone = home / "repos" / "shop"
    checkout = source.checkout
    assert (checkout.name, checkout.root, checkout.branch) == ("shop", clone, "main")
    assert checkout.commit == work.head() and checkout.source == f"file://{bare}"
    assert checkout.web_url == ""
    assert git(clone, "config", "remote.origin.partialclonefilter") == "blob:none"
    missing = git(clone, "rev-list", "--objects", "--missing=print", "--all")
    assert f"?{committed_blob(work, 'app.py', 'HEAD~1')}" in missing  # old blob never fetched
    assert listing(source)["app.py"] == "def main():\n    return 2\n"

    work.remove("old.py")
    work.write("new.py", "new = True\n")
    newer = work.commit("third")
    work.push(bare)
    again = open_source(f"file://{bare}", home=home)
    assert again.checkout.commit == newer
    assert set(listing(again)) == {"app.py", "new.py"}


def test_force_push_rewrites_the_clone(upstream: tuple[GitRepo, Path], home: Path) -> None:
    work, bare = upstream
    open_source(f"file://{bare}", home=home, name="shop")
    git(work.path, "reset", "-q", "--hard", "HEAD~1")
    work.write("app.py", "def main():\n    return 'rewritten'\n")
    rewritten = work.commit("rewritten history")
    work.push(bare, force=True)
    source = open_source(f"file://{bare}", home=home, name="shop")
    assert source.checkout.commit == rewritten
    assert listing(source)["app.py"] == "def main():\n    return 'rewritten'\n"


def test_remote_branches(upstream: tuple[GitRepo, Path], home: Path) -> None:
    work, bare = upstream
    git(work.path, "checkout", "-q", "-b", "release")
    work.write("rel.py", "release = 1\n")
    release = work.commit()
    work.push(bare, branch="release")
    source = open_source(f"file://{bare}", home=home, branch="release")
    assert (source.checkout.branch, source.checkout.commit) == ("release", release)
    assert "rel.py" in listing(source)
    back = open_source(f"file://{bare}", home=home, branch="main")  # switch the same clone
    assert back.checkout.branch == "main" and "rel.py" not in listing(back)

    with pytest.raises(SourceError) as fresh:
        open_source(f"file://{bare}", home=home / "other", branch="nope")
    with pytest.raises(SourceError) as existing:
        open_source(f"file://{bare}", home=home, branch="nope")
    for caught in (fresh, existing):
        assert caught.value.user_message == f"Branch 'nope' was not found in file://{bare}."
    assert not (home / "other" / "repos" / "shop").exists()


def test_default_branch_follows_the_remote(upstream: tuple[GitRepo, Path], home: Path) -> None:
    work, bare = upstream
    git(bare, "symbolic-ref", "HEAD", "refs/heads/trunk")
    work.write("trunk.py", "t = 1\n")
    trunk = work.commit()
    work.push(bare, branch="trunk")
    source = open_source(f"file://{bare}", home=home)
    assert (source.checkout.branch, source.checkout.commit) == ("trunk", trunk)
    # Upstream renames its default branch: the clone follows on the next open.
    work.push(bare, branch="main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    git(bare, "branch", "-D", "trunk")
    again = open_source(f"file://{bare}", home=home)
    assert again.checkout.branch == "main"


def test_token_never_reaches_config_errors_or_logs(
    upstream: tuple[GitRepo, Path], home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _, bare = upstream
    open_source(f"file://{bare}", home=home, token=TOKEN)
    open_source(f"file://{bare}", home=home, token=TOKEN)
    assert TOKEN not in (home / "repos" / "shop" / ".git" / "config").read_text()
    with pytest.raises(SourceError) as caught:
        open_source("file:///nonexistent/repo.git", home=home, token=TOKEN)
    assert TOKEN not in str(caught.value) and TOKEN not in caught.value.user_message
    assert TOKEN not in caplog.text


def test_unusable_clone_directory_is_replaced(upstream: tuple[GitRepo, Path], home: Path) -> None:
    work, bare = upstream
    leftover = home / "repos" / "shop"
    leftover.mkdir(parents=True)
    (leftover / "junk.txt").write_text("half-finished clone\n")
    source = open_source(f"file://{bare}", home=home)
    assert source.checkout.commit == work.head()
    assert not (leftover / "junk.txt").exists()


# --- plain directories --------------------------------------------------------------------


def test_plain_directory_walk(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "plain"
    files = {
        "main.py": "print('hi')\n",
        "pkg/mod.py": "x = 1\n",
        "pkg/cache.tmp": "ignored\n",
        "pkg/keep.tmp": "re-included\n",
        "logs/app.log": "ignored dir\n",
        "node_modules/lib/index.js": "never walked\n",
        "env/pyvenv.cfg": "home = /usr\n",
        "env/lib/site.py": "virtualenv\n",
        ".gitignore": "*.tmp\n!keep.tmp\n/logs/\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.mkfifo(root / "pipe")
    source = open_source(str(root), home=home)
    listed = list(source.files())
    assert [f.path for f in listed] == [".gitignore", "main.py", "pkg/keep.tmp", "pkg/mod.py"]
    assert source.skipped() == {"special": 1}
    main = next(f for f in listed if f.path == "main.py")
    expected = subprocess.run(
        ["git", "hash-object", str(root / "main.py")], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert main.blob == git_blob_sha(b"print('hi')\n") == expected
    assert source.read_text(main) == "print('hi')\n"
    checkout = source.checkout
    assert (checkout.commit, checkout.branch, checkout.web_url) == ("", "", "")
    assert checkout.name == "plain" and checkout.source == str(root.resolve())


def test_plain_directory_symlinks_are_never_followed(tmp_path: Path, home: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("PASSWORD = 'x'\n")
    root = tmp_path / "plain"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "real.py").write_text("real = 1\n")
    os.symlink(outside / "secret.py", root / "linked.py")
    os.symlink(outside, root / "outside_dir")
    os.symlink(root, root / "sub" / "loop")  # a cycle back to the root
    os.symlink("missing", root / "dangling")
    source = open_source(str(root), home=home)
    assert listing(source) == {"sub/real.py": "real = 1\n"}
    assert source.skipped() == {"symlink": 4}


def test_plain_directory_latin1_and_limits(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "old.py").write_bytes("name = 'Jos\xe9'\n".encode("latin-1"))
    (root / "big.py").write_text("x = 1\n" * 1000)
    (root / "Cargo.lock").write_text("[[package]]\n")
    source = open_source(str(root), home=home, max_file_bytes=2000)
    assert listing(source) == {"old.py": "name = 'Jos\ufffd'\n"}
    assert source.skipped() == {"too_large": 1, "lockfile": 1}


def test_branch_on_a_plain_directory_is_an_error(tmp_path: Path, home: Path) -> None:
    with pytest.raises(SourceError, match="not a git repository"):
        open_source(str(tmp_path), home=home, branch="main")


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "problem"),
    [
        ("/definitely/missing/path", "does not exist"),
        ("not a url", "does not exist"),
        ("https://exa mple.com/x", "contains whitespace"),
        ("ftp://host/repo", "Unsupported URL scheme 'ftp'"),
        ("file:///nonexistent/repo.git", "No git repository was found at file:///nonexistent"),
        ("", "No repository location"),
        ("https://github.com", "does not name a repository"),
    ],
)
def test_bad_locations(location: str, problem: str, home: Path) -> None:
    with pytest.raises(SourceError) as caught:
        open_source(location, home=home, token=TOKEN)
    message = caught.value.user_message
    assert problem in message
    assert "\n" not in message and TOKEN not in str(caught.value)


def test_file_instead_of_directory(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "file.txt"
    path.write_text("x")
    with pytest.raises(SourceError, match="is not a directory"):
        open_source(str(path), home=home)


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", ""])
def test_unsafe_names_are_rejected(name: str, home: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a usable repository name"):
        open_source(str(tmp_path), home=home, name=name)


@pytest.mark.parametrize(
    ("location", "name"),
    [
        ("https://github.com/psf/requests.git", "requests"),
        ("https://github.com/psf/requests", "requests"),
        ("https://github.com/psf/requests/", "requests"),
        ("git@github.com:o/my repo.git", "my-repo"),
        ("git@gitlab.com:g/sub/tool.git", "tool"),
        ("ssh://git@host:2222/x/y.git", "y"),
        ("file:///srv/git/shop.git", "shop"),
        ("/home/me/projects/billing/", "billing"),
        ("https://host/.git", "repo"),
    ],
)
def test_default_name(location: str, name: str) -> None:
    assert default_name(location) == name
