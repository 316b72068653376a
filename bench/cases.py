"""Evaluation cases, the local clones they refer to, and commits materialised as directories.

A case file is JSONL in the format of the shared `eval/` directory: `id`,
`repo` ("owner/name"), `commit`, `question`, `gold_files`, and optionally
`gold_functions` and `gold_files_exist_at_head`. Systems only ever see the
`question` and a directory holding the tree at the case's commit: nothing
here hands them answers, gold labels or later history.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

PROTOCOLS = ("per-commit", "head")


class CaseError(Exception):
    """A case file or clone directory that cannot be used (printed without a traceback)."""


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    repo: str  # owner/name
    commit: str
    question: str
    gold_files: tuple[str, ...]
    gold_functions: tuple[str, ...] = ()
    exists_at_head: bool = False
    dataset: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    """One tree to index and the cases to ask against it."""

    repo: str
    commit: str
    cases: tuple[Case, ...] = field(default_factory=tuple)


def case_arguments(doc: str | None, *, cases: bool = True) -> argparse.ArgumentParser:
    """A command line whose help is the script's docstring, taking --clones (and --cases)."""
    ap = argparse.ArgumentParser(
        description=doc.split("\n\n")[0] if doc else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=doc,
    )
    ap.add_argument("--clones", type=Path, required=True, help="directory of local git clones")
    if cases:
        ap.add_argument(
            "--cases", type=Path, action="append", required=True, help="JSONL case file"
        )
    return ap


def load_cases(paths: Sequence[Path]) -> list[Case]:
    return read_cases(paths, lambda line, where, path: _parse(line, where, path.stem))


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_HasId)


def read_cases(paths: Sequence[Path], parse: Callable[[str, str, Path], T]) -> list[T]:
    """Every non-blank line of the JSONL files, parsed as `parse(line, "path:line", path)`;
    case ids must be unique across the files."""
    cases: list[T] = []
    seen: set[str] = set()
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CaseError(f"cannot read {path}: {exc.strerror}") from exc
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            case = parse(line, f"{path}:{number}", path)
            if case.id in seen:
                raise CaseError(f"{path}:{number}: duplicate case id {case.id!r}")
            seen.add(case.id)
            cases.append(case)
    return cases


def _parse(line: str, where: str, dataset: str) -> Case:
    try:
        row = json.loads(line)
        return Case(
            id=str(row["id"]),
            repo=str(row["repo"]),
            commit=str(row["commit"]),
            question=str(row["question"]),
            gold_files=tuple(row["gold_files"]),
            gold_functions=tuple(row.get("gold_functions") or ()),
            exists_at_head=bool(row.get("gold_files_exist_at_head", False)),
            dataset=dataset,
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CaseError(f"{where}: not a valid case ({exc})") from exc


def find_clone(clones: Path, repo: str) -> Path:
    """`clones/owner+name/repo` or `clones/owner/name` (bare or with a work tree)."""
    owner, _, name = repo.partition("/")
    for candidate in (clones / f"{owner}+{name}" / "repo", clones / owner / name):
        if _git_dir(candidate) is not None:
            return candidate
    raise CaseError(f"no clone of {repo} under {clones} (owner+name/repo or owner/name)")


def _git_dir(path: Path) -> Path | None:
    if (path / ".git").is_dir():
        return path / ".git"
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path
    return None


def git(clone: Path, *args: str) -> str:
    git_dir = _git_dir(clone) or clone
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def commit_order(clone: Path, commit: str) -> tuple[int, int]:
    """(committer time, number of ancestors): by date, and parents before children on ties."""
    try:
        seconds = int(git(clone, "show", "-s", "--format=%ct", f"{commit}^{{commit}}"))
        ancestors = int(git(clone, "rev-list", "--count", commit))
    except subprocess.CalledProcessError as exc:
        raise CaseError(f"commit {commit[:12]} is not in {clone}") from exc
    return seconds, ancestors


def head_commit(clone: Path) -> str:
    return git(clone, "rev-parse", "HEAD^{commit}")


def plan(cases: Iterable[Case], clones: dict[str, Path], protocol: str) -> list[Step]:
    """Steps in repository order, commits oldest first (so incremental diffs stay small).

    per-commit: every case at its own commit. head: cases whose gold files still
    exist, all asked against the clone's newest commit.
    """
    by_tree: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        if protocol == "head":
            if not case.exists_at_head:
                continue
            commit = head_commit(clones[case.repo])
        else:
            commit = case.commit
        by_tree.setdefault((case.repo, commit), []).append(case)
    keys = sorted(by_tree, key=lambda k: (k[0], *commit_order(clones[k[0]], k[1]), k[1]))
    return [Step(repo, commit, tuple(by_tree[(repo, commit)])) for repo, commit in keys]


def materialise(clone: Path, commit: str, dest: Path) -> Path:
    """Replace `dest` with the tree of `commit` (`git archive | tar -x`); no history inside."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dest.parent))
    git_dir = _git_dir(clone) or clone
    archive = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    untar = subprocess.run(
        ["tar", "-x", "-f", "-", "-C", str(staging)],
        stdin=archive.stdout,
        capture_output=True,
        check=False,
    )
    if archive.stdout is not None:
        archive.stdout.close()
    _, err = archive.communicate()
    if archive.returncode != 0 or untar.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        detail = (err or untar.stderr).decode("utf-8", "replace").strip()[:300]
        raise CaseError(f"cannot materialise {commit[:12]} of {clone}: {detail}")
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
    return dest


def repo_slug(repo: str) -> str:
    return repo.replace("/", "+")


def iter_steps(steps: Sequence[Step], repo: str | None = None) -> Iterator[Step]:
    yield from (s for s in steps if repo is None or s.repo == repo)
