"""The values the history store keeps: commits, each file's line attribution, the head.

A repository's recorded commits are numbered (`seq`) in the order they were processed,
parents before children, so a larger number is never an ancestor of a smaller one.
Each file at the recorded head keeps, per line, what changed it (`LineState`), run-length
encoded (`FileLines`); lines no recorded commit touched carry nothing (older than the
horizon). From that, `FileLines.touching(start, end)` gives the commits that changed a
line range, newest first, the way `git log -L<start>,<end>:<path>` lists them:

- a commit touches the range when it added or modified one of its lines, or deleted
  lines strictly inside it (between two of its lines);
- a merge touches it only when the range differs from every one of its parents (git's
  history simplification follows a parent the range is identical to); otherwise the
  lines keep the attribution of the side they came from, side-branch commits included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

HISTORY_KEEP = 6  # commits remembered per line (the newest), for "who changed X"
MARKS_KEEP = 8  # merges remembered per line


@dataclass(frozen=True, slots=True)
class LineState:
    """What changed one line: `hist` newest first (commit seqs); `gap`: the commit that
    deleted lines just above it (0: none); `marks`: (merge seq, parent index) for merges
    whose that parent differs from this line."""

    hist: tuple[int, ...] = ()
    gap: int = 0
    marks: tuple[tuple[int, int], ...] = ()


OLD = LineState()


@dataclass(frozen=True, slots=True)
class FileLines:
    """One file's line states at the recorded head, as runs of (count, state)."""

    path: str
    runs: tuple[tuple[int, LineState], ...]

    @classmethod
    def of(cls, path: str, lines: Sequence[LineState]) -> FileLines:
        runs: list[tuple[int, LineState]] = []
        for state in lines:
            if runs and runs[-1][1] == state:
                runs[-1] = (runs[-1][0] + 1, state)
            else:
                runs.append((1, state))
        while runs and runs[-1][1] == OLD:
            runs.pop()  # lines past the end are untouched anyway
        return cls(path, tuple(runs))

    def lines(self) -> list[LineState]:
        out: list[LineState] = []
        for count, state in self.runs:
            out.extend([state] * count)
        return out

    def window(self, start: int, end: int) -> list[LineState]:
        """States of lines start..end (1-based, inclusive); untouched lines are OLD."""
        out: list[LineState] = []
        line = 1
        for count, state in self.runs:
            lo, hi = max(line, start), min(line + count - 1, end)
            if lo <= hi:
                out.extend([state] * (hi - lo + 1))
            line += count
            if line > end:
                break
        return out + [OLD] * (end - start + 1 - len(out))

    def touching(
        self, start: int, end: int, parents: Mapping[int, int], committed: Mapping[int, int]
    ) -> list[int]:
        """Seqs of the commits that changed lines start..end, newest first as git log
        orders them (commit time, then processing order); `parents`: merge seq -> its
        number of parents; `committed`: seq -> commit time."""
        states = self.window(start, end)
        found: set[int] = set()
        marks: dict[int, set[int]] = {}
        for offset, state in enumerate(states):
            found.update(state.hist)
            if state.gap and offset > 0:
                found.add(state.gap)
            for merge, parent in state.marks:
                marks.setdefault(merge, set()).add(parent)
        for merge, sides in marks.items():
            if len(sides) >= parents.get(merge, 2):
                found.add(merge)
        return sorted(found, key=lambda seq: (committed.get(seq, 0), seq), reverse=True)

    def encode(self) -> str:
        return json.dumps(
            [[n, list(s.hist), s.gap, [list(m) for m in s.marks]] for n, s in self.runs],
            separators=(",", ":"),
        )

    @classmethod
    def decode(cls, path: str, text: str) -> FileLines:
        runs = []
        made: dict[str, LineState] = {}  # equal states are decoded once (they repeat a lot)
        for n, hist, gap, marks in json.loads(text):
            key = f"{hist}{gap}{marks}"
            state = made.get(key)
            if state is None:
                state = made[key] = LineState(tuple(hist), gap, tuple((m, p) for m, p in marks))
            runs.append((int(n), state))
        return cls(path, tuple(runs))


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """One recorded commit. Texts are scrubbed of secrets before they are kept."""

    seq: int
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    authored: int  # unix time
    committed: int  # unix time (git log's order)
    subject: str
    body: str
    tags: tuple[str, ...] = ()
    prs: tuple[int, ...] = ()  # the pull request that landed it (merge or squash subject)
    refs: tuple[int, ...] = ()  # other issue or PR numbers its message names
    paths: tuple[str, ...] = ()  # files it changed (vs its first parent), new names
    ranges: str = ""  # "path:1-4,9-9;path2:3-3": lines it changed, in its own coordinates
    excerpt: str = ""  # the first changed lines of its diff (scrubbed)
    symbols: tuple[str, ...] = ()  # `path::Class.method` whose current lines it changed

    @property
    def pr(self) -> int | None:
        return self.prs[0] if self.prs else None

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


@dataclass(frozen=True, slots=True)
class TagRecord:
    name: str
    sha: str  # the commit it points to
    committed: int  # that commit's time (0 when it is not among the recorded commits)


@dataclass(frozen=True, slots=True)
class HistoryHead:
    """What a repository's recorded history is: up to which commit, how far back."""

    repo: str
    head: str  # the commit the line states are at
    horizon: str  # "commits=2000;days=0": the settings it was built with
    oldest: int  # committed time of the oldest recorded commit (0: none)
    complete: bool  # the recorded commits reach the root (nothing is older)
    commits: int = 0


@dataclass(frozen=True, slots=True)
class PullRequest:
    """A pull request's title and description, from the host's API (cached)."""

    number: int
    title: str
    body: str = ""
    url: str = ""
    state: str = ""


@dataclass(frozen=True, slots=True)
class HistoryUpdate:
    """One atomic write of a repository's history (`HistoryRecords.apply`)."""

    head: HistoryHead
    commits: Sequence[CommitRecord] = ()
    files: Sequence[FileLines] = ()
    removed_paths: Sequence[str] = ()
    tags: Sequence[TagRecord] = ()
    symbols: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # sha -> symbols
    replace: bool = False  # drop everything recorded of the repository first
