"""Real git repositories built in temp dirs, with the git CLI."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


class GitRepo:
    """A working repository with helpers to write files and commit them."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q", "-b", branch)

    def write(self, rel: str, content: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def remove(self, rel: str) -> None:
        git(self.path, "rm", "-q", rel)

    def move(self, src: str, dst: str) -> None:
        (self.path / dst).parent.mkdir(parents=True, exist_ok=True)
        git(self.path, "mv", src, dst)

    def commit(self, message: str = "change") -> str:
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD")

    def bare_clone(self, dest: Path) -> Path:
        """A bare copy to serve as a `file://` remote."""
        git(self.path.parent, "clone", "-q", "--bare", str(self.path), str(dest))
        return dest

    def push(self, remote: Path, *, force: bool = False, branch: str = "main") -> None:
        args = ["push", "-q", str(remote), f"HEAD:refs/heads/{branch}"]
        if force:
            args.insert(1, "--force")
        git(self.path, *args)


# --- hostile repositories -----------------------------------------------------------------


def write_tree(repo: Path, entries: list[tuple[str, bytes, str]]) -> str:
    """A tree object written as given (mode, raw name, oid), names unchecked: `--literally`."""
    raw = b"".join(
        mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(
        ["git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
        cwd=repo,
        env=env,
        input=raw,
        check=True,
        capture_output=True,
    )
    return out.stdout.decode().strip()


def write_blob(repo: Path, data: bytes) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        env=env,
        input=data,
        check=True,
        capture_output=True,
    )
    return out.stdout.decode().strip()


def commit_tree(repo: Path, tree: str, branch: str = "main") -> str:
    """Commit `tree` on top of `branch` and move the branch there."""
    parent = git(repo, "rev-parse", "--verify", "-q", branch)
    commit = git(repo, "commit-tree", tree, "-p", parent, "-m", "crafted")
    git(repo, "update-ref", f"refs/heads/{branch}", commit)
    return commit


def delete_object(repo: Path, oid: str) -> None:
    """Remove one object from `repo`'s store (packs are exploded to loose objects first)."""
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    packs = sorted((git_dir / "objects" / "pack").glob("*.pack"))
    for pack in packs:
        moved = pack.with_suffix(".unpacking")
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        env = {**os.environ, **GIT_ENV}
        with moved.open("rb") as stream:
            subprocess.run(
                ["git", "unpack-objects", "-q"], cwd=repo, env=env, stdin=stream, check=True
            )
        moved.unlink()
    (git_dir / "objects" / oid[:2] / oid[2:]).unlink()
