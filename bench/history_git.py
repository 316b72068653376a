"""Gold commits for the history evaluation, derived from a clone's own records (git only).

What counts as a commit that "names" pull request or issue N (GitHub's conventions):

  squash    its subject carries "(#N)" (GitHub's squash and rebase-merge subjects,
            backports like "[2.3.x] Fix x (#N) (#M)" too); reverts ("Revert ...") excluded
  merge     its subject starts "Merge pull request #N " (GitHub's merge button)
  closes    its message says a closing keyword before "#N" or before a link to issue or
            pull N of the same repository ("Fixes #N", "closes: #N", "resolved
            https://github.com/o/r/issues/N"); GitHub's keywords: close[sd], fix(e[sd]),
            resolve[sd]

and the gold of N is every commit that names it, plus, for a merged pull request:

  pr-commit the pull request's own commits: non-merge commits reachable from the merge's
            second parent and not from its first (`git rev-list --no-merges M^2 ^M^1`)
  brought   for a non-merge commit that names N, the pull-request merge that brought it in
            (the oldest merge on its ancestry path to the pinned commit whose first parent
            does not reach it, when that merge's subject is GitHub's)

A bare "#N" elsewhere ("see #N", "regressed in #N") is not gold: it mentions N, it did not
make the change. Only commits reachable from the pinned commit count.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from bench.cases import CaseError, find_clone

SQUASH = re.compile(r"\(#(\d+)\)")
MERGE = re.compile(r"^Merge pull request #(\d+)\b")
_KEYWORD = r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+"
_SEP = "\x1f"
_END = "\x1e"


def run_git(git_dir: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",  # a commit message or file in another encoding stays readable
        check=False,
    )
    if check and out.returncode != 0:
        raise CaseError(f"git {' '.join(args[:3])}... failed: {out.stderr.strip()[:300]}")
    return out.stdout


def git_dir_of(clone: Path) -> Path:
    return clone / ".git" if (clone / ".git").is_dir() else clone


def open_clone(clones: Path, repo: str) -> Path:
    """The git directory of `repo`'s clone under `clones` (owner+name/repo or owner/name)."""
    return git_dir_of(find_clone(clones, repo))


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    date: str  # author date, ISO 8601
    message: str

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def closing_pattern(repo: str) -> re.Pattern[str]:
    """Closing keywords before "#N" or before a link to issue/pull N of `repo`."""
    link = r"https?://github\.com/" + re.escape(repo) + r"/(?:issues|pull)/"
    return re.compile(_KEYWORD + r"(?:#|" + link + r")(\d+)\b", re.IGNORECASE)


@dataclass
class History:
    """Every commit reachable from `commit` in `git_dir`, with the numbers each one names."""

    git_dir: Path
    repo: str  # owner/name, for links to its own issues
    commit: str
    commits: dict[str, Commit] = field(default_factory=dict)
    _own: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def read(cls, git_dir: Path, repo: str, commit: str) -> History:
        history = cls(git_dir, repo, commit)
        fmt = _SEP.join(("%H", "%P", "%an", "%aI", "%B")) + _END
        raw = run_git(git_dir, "log", f"--format={fmt}", commit)
        for record in raw.split(_END):
            record = record.lstrip("\n")
            if not record:
                continue
            sha, parents, author, date, message = record.split(_SEP, 4)
            history.commits[sha] = Commit(sha, tuple(parents.split()), author, date, message)
        return history

    @cached_property
    def _naming(self) -> dict[int, dict[str, str]]:
        closes = closing_pattern(self.repo)
        table: dict[int, dict[str, str]] = {}
        for c in self.commits.values():
            subject = c.subject
            if not subject.lower().startswith("revert"):
                for n in SQUASH.findall(subject):
                    table.setdefault(int(n), {}).setdefault(c.sha, "squash")
            if m := MERGE.match(subject):
                table.setdefault(int(m.group(1)), {})[c.sha] = "merge"
            for n in closes.findall(c.message):
                table.setdefault(int(n), {}).setdefault(c.sha, "closes")
        return table

    @cached_property
    def _mainline(self) -> frozenset[str]:
        return frozenset(run_git(self.git_dir, "rev-list", "--first-parent", self.commit).split())

    def naming(self, number: int) -> dict[str, str]:
        """The commits that name `number` (squash subject, PR merge, closing keyword)."""
        return dict(self._naming.get(number, {}))

    def pr_commits(self, merge: str) -> frozenset[str]:
        """A pull-request merge's own non-merge commits (second parent's side only)."""
        if merge not in self._own:
            first, second = self.commits[merge].parents[:2]
            out = run_git(self.git_dir, "rev-list", "--no-merges", second, f"^{first}")
            self._own[merge] = frozenset(out.split())
        return self._own[merge]

    def bringing_merge(self, sha: str) -> str | None:
        """The pull-request merge that brought a branch commit in, if GitHub's button did."""
        if sha in self._mainline:
            return None
        out = run_git(
            self.git_dir, "rev-list", "--ancestry-path", "--merges", "--reverse",
            f"{sha}..{self.commit}",
        )  # fmt: skip
        for merge in out.split():
            if not _is_ancestor(self.git_dir, sha, self.commits[merge].parents[0]):
                return merge if MERGE.match(self.commits[merge].subject) else None
        return None

    def gold_for(self, numbers: list[int]) -> dict[str, str]:
        """Gold commits for changelog numbers: sha -> role ("squash #N", "pr-commit #N", ...)."""
        gold: dict[str, str] = {}
        for number in numbers:
            for sha, role in self.naming(number).items():
                gold.setdefault(sha, f"{role} #{number}")
                commit = self.commits[sha]
                if role == "merge":
                    for own in sorted(self.pr_commits(sha)):
                        gold.setdefault(own, f"pr-commit #{number}")
                elif not commit.is_merge:
                    brought = self.bringing_merge(sha)
                    if brought:
                        gold.setdefault(brought, f"brought #{number}")
        return gold


def _status(git_dir: Path, *args: str) -> int:
    """The exit status of a git command that answers by it (--is-ancestor, diff --quiet)."""
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False
    ).returncode


def _is_ancestor(git_dir: Path, older: str, newer: str) -> bool:
    return _status(git_dir, "merge-base", "--is-ancestor", older, newer) == 0


@dataclass(frozen=True, slots=True)
class LastChange:
    """`git log -1 -L<start>,<end>:<path>`: the commit, and where those lines were then."""

    sha: str
    path_then: str  # the file's path in that commit (differs when it was renamed since)
    start_then: int  # the range's first line in that commit (differs when lines moved)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", re.MULTILINE)
_PLUS = re.compile(r"^\+\+\+ (?:b/(.*)|/dev/null)$", re.MULTILINE)


def last_change(git_dir: Path, commit: str, path: str, start: int, end: int) -> LastChange:
    out = run_git(git_dir, "log", "-1", "--format=%H", f"-L{start},{end}:{path}", commit)
    sha = out.split("\n", 1)[0].strip()
    if not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise CaseError(f"git log -L{start},{end}:{path} at {commit[:12]} printed no commit")
    then = _PLUS.search(out)
    hunk = _HUNK.search(out)
    return LastChange(
        sha,
        (then.group(1) or path) if then else path,
        int(hunk.group(1)) if hunk else start,
    )


def since_gold(git_dir: Path, commit: str, tag: str, area: str) -> list[str]:
    """Commits after `tag` up to `commit` that changed `area`, newest first.

    Non-merge commits touching a path under `area`, plus the pull-request merges in the
    range that changed `area` relative to their first parent.
    """
    changed = run_git(git_dir, "rev-list", "--no-merges", f"{tag}..{commit}", "--", area).split()
    merges = run_git(git_dir, "rev-list", "--merges", f"{tag}..{commit}").split()
    keep = set(changed)
    for merge in merges:
        subject = run_git(git_dir, "show", "-s", "--format=%s", merge).strip()
        if MERGE.match(subject) and _changes(git_dir, f"{merge}^1", merge, area):
            keep.add(merge)
    order = run_git(git_dir, "rev-list", f"{tag}..{commit}").split()
    return [sha for sha in order if sha in keep]


def _changes(git_dir: Path, old: str, new: str, area: str) -> bool:
    return _status(git_dir, "diff", "--quiet", old, new, "--", area) == 1
