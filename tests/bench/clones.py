"""Repositories the bench tests ask about: one commit, bare-cloned where `--clones` looks."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitrepo import GitRepo


def one_commit_clone(tmp_path: Path, name: str, files: dict[str, str]) -> str:
    """`files` committed once in a repository acme/<name>, cloned to tmp_path/clones/acme+<name>;
    returns the commit."""
    repo = GitRepo(tmp_path / "work" / name)
    for path, text in files.items():
        repo.write(path, text)
    commit = repo.commit("first")
    repo.bare_clone(tmp_path / "clones" / f"acme+{name}" / "repo")
    return commit
