"""Which commit changed each line: blame carried forward through the commits' diffs.

Commits are taken parents first. Each keeps, per file, one `LineState` a line; a
commit's state is its first parent's with its own diff applied: lines it adds or
modifies record it (a modified line also keeps what changed the lines it replaced,
newest first), a deletion marks the line below the gap. A merge's lines that differ
from its first parent are compared with its other parents: a line one of them already
has keeps that parent's state (so side-branch commits keep their lines, as in
`git log -L`), marked as differing from the first parent; lines no parent has are the
merge's own. A parent outside the horizon (or beyond a shallow clone's boundary) has
no state: its lines are "older than the recorded history". Nothing here reads a blob:
the hunk positions are enough. `bot.store.history_records` reads the states back.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.ingest.history_log import FileDiff, Hunk, RawCommit
from bot.store.history_records import HISTORY_KEEP, MARKS_KEEP, OLD, LineState

Files = dict[str, list[LineState]]


@dataclass(slots=True)
class _Held:
    files: Files
    waiting: int  # children not yet processed


class LineTracker:
    """Feed commits parents first (`add`); `files(sha)` is a processed commit's state."""

    def __init__(
        self,
        seqs: Mapping[str, int],
        start: Mapping[str, Files] | None = None,
        needed: Collection[str] | None = None,
    ) -> None:
        """`needed`: the only paths whose lines are carried (None: every path)."""
        self._seqs = seqs
        self._needed = needed
        self._held: dict[str, _Held] = {
            sha: _Held(files, 1 << 30) for sha, files in (start or {}).items()
        }  # start states (the recorded head) are never freed
        self._children: dict[str, int] = {}

    def expect(self, commits: Iterable[RawCommit]) -> None:
        """Count each commit's children first, so a state is freed after its last one."""
        for commit in commits:
            for parent in dict.fromkeys(commit.parents):
                self._children[parent] = self._children.get(parent, 0) + 1

    def add(self, commit: RawCommit, *, boundary: bool = False) -> None:
        """Apply `commit`; `boundary`: a shallow clone's cut (its diff adds every file)."""
        seq = self._seqs[commit.sha]
        parents = [self._state(p) for p in commit.parents]
        if boundary:
            files: Files = {}
        else:
            files = dict(parents[0]) if parents else {}
            others = _by_path(commit)
            for diff in commit.diffs:
                old = files.pop(diff.old_path, []) if diff.old_path else []
                if not diff.new_path or diff.binary:
                    continue
                if self._needed is not None and diff.new_path not in self._needed:
                    continue
                lines = apply_hunks(old, diff.hunks, seq)
                if len(parents) > 1:
                    lines = _merged(lines, diff, others, parents, seq)
                files[diff.new_path] = lines
        for parent in dict.fromkeys(commit.parents):
            self._release(parent)
        self._held[commit.sha] = _Held(files, self._children.get(commit.sha, 0))

    def files(self, sha: str) -> Files:
        held = self._held.get(sha)
        return held.files if held is not None else {}

    def _state(self, sha: str) -> Files:
        held = self._held.get(sha)
        return held.files if held is not None else {}  # outside the horizon: all older

    def _release(self, sha: str) -> None:
        held = self._held.get(sha)
        if held is None:
            return
        held.waiting -= 1
        if held.waiting <= 0:
            del self._held[sha]


def _by_path(commit: RawCommit) -> list[dict[str, FileDiff]]:
    """A merge's diffs against each other parent, by new path."""
    found = commit.other_diffs
    return [{d.new_path: d for d in found.get(i, ())} for i in range(1, len(commit.parents))]


def apply_hunks(old: Sequence[LineState], hunks: Sequence[Hunk], seq: int) -> list[LineState]:
    """`old` (lines past its end are untouched) with one diff's hunks applied by `seq`."""
    new: list[LineState] = []
    pos = 0
    gap = 0
    for a, b, _, d in hunks:
        start = a - 1 if b > 0 else a  # an insertion goes after old line a
        gap = _copy(old, pos, start, new, gap)
        removed = _slice(old, start, start + b)
        if d > 0:
            new.extend([_changed(removed, seq)] * d)
        else:
            gap = seq  # the line below a deletion remembers it
        pos = start + b
    _copy(old, pos, max(pos, len(old)), new, gap)
    return new


def _copy(old: Sequence[LineState], start: int, end: int, new: list[LineState], gap: int) -> int:
    """Append old[start:end] (untouched past its end) to `new`; a pending gap marks the
    first line appended. What is still pending afterwards."""
    if end <= start:
        return gap
    part = _slice(old, start, end)
    if gap:
        first = part[0]
        part[0] = LineState(first.hist, max(gap, first.gap), first.marks)
    new.extend(part)
    return 0


def _slice(old: Sequence[LineState], start: int, end: int) -> list[LineState]:
    part = list(old[start:end])
    missing = end - start - len(part)
    return part + [OLD] * missing if missing > 0 else part


def _changed(removed: Sequence[LineState], seq: int) -> LineState:
    """A line `seq` wrote in place of `removed`: it, then what had changed those lines."""
    earlier: set[int] = set()
    for state in removed:
        earlier.update(state.hist)
        if state.gap:
            earlier.add(state.gap)
    earlier.discard(seq)
    return LineState((seq, *sorted(earlier, reverse=True)[: HISTORY_KEEP - 1]))


def _merged(
    lines: list[LineState],
    diff: FileDiff,
    others: Sequence[Mapping[str, FileDiff]],
    parents: Sequence[Files],
    seq: int,
) -> list[LineState]:
    """A merge's file: lines new against its first parent take the state of another parent
    that has them, and lines that differ from some parents record which (`marks`);
    `lines` (the first parent's with the merge's diff applied) is updated in place;
    `others[i - 1]`: the merge's diffs against parent i by new path.
    Only the lines a diff names are visited: merges of big files stay cheap."""
    result = lines
    size = len(result)
    own = {i for i in _added(diff.hunks) if i < size}  # differ from the first parent
    gaps = {c for _, _, c, d in diff.hunks if d == 0 and c < size and c not in own}
    for i in gaps:  # a deletion against the first parent: the merge's only if no parent has it
        state = result[i]
        result[i] = LineState(state.hist, 0, state.marks)
    first = own | gaps
    differ = [first]  # per parent index: the lines that differ from that parent
    taken: set[int] = set()
    for index in range(1, len(parents)):
        other = others[index - 1].get(diff.new_path)
        source_path = diff.new_path if other is None else other.old_path
        source = parents[index].get(source_path, []) if source_path else []
        hunks = other.hunks if other is not None else []
        changed = {i for i in _added(hunks) if i < size}
        differ.append(changed)
        mapper = _LineMap(hunks)
        for i in sorted(first - taken - changed):
            mapped = mapper.line(i + 1)
            result[i] = source[mapped - 1] if 0 < mapped <= len(source) else OLD
            taken.add(i)
    for i in gaps - taken:
        state = result[i]
        result[i] = LineState(state.hist, seq, state.marks)
    _mark(result, differ, seq)
    return result


def _mark(result: list[LineState], differ: Sequence[set[int]], seq: int) -> None:
    """Record on each line the merge's parents it differs from (`differ[i]`: the lines that
    differ from parent i), unless it differs from all of them (the merge's own line,
    already recorded). Equal states stay shared."""
    for sides, group in _by_sides(differ):
        made: dict[int, tuple[LineState, LineState]] = {}
        for i in group:
            state = result[i]
            done = made.get(id(state))
            if done is None:
                marks = tuple(sorted({*state.marks, *((seq, s) for s in sides)}, reverse=True))
                done = made[id(state)] = (
                    state,
                    LineState(state.hist, state.gap, marks[:MARKS_KEEP]),
                )
            result[i] = done[1]


def _by_sides(differ: Sequence[set[int]]) -> list[tuple[tuple[int, ...], Collection[int]]]:
    """The lines that differ from some parents but not all, grouped by those parents."""
    if len(differ) == 2:  # the usual merge: set algebra, no visit of each line
        return [((0,), differ[0] - differ[1]), ((1,), differ[1] - differ[0])]
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in set().union(*differ):
        sides = tuple(index for index, lines in enumerate(differ) if i in lines)
        if len(sides) < len(differ):
            groups.setdefault(sides, []).append(i)
    return list(groups.items())


def _added(hunks: Sequence[Hunk]) -> set[int]:
    return {i for _, _, c, d in hunks for i in range(c - 1, c - 1 + d)}


class _LineMap:
    """New line -> the other side's number, for lines a diff left alone (bisect on hunks)."""

    def __init__(self, hunks: Sequence[Hunk]) -> None:
        self._starts: list[int] = []  # first new line after each hunk's own lines
        self._deltas: list[int] = []  # old - new for lines from there on
        delta = 0
        for _, b, c, d in hunks:
            delta += b - d
            self._starts.append(c + d if d > 0 else c + 1)
            self._deltas.append(delta)

    def line(self, new: int) -> int:
        at = bisect_right(self._starts, new) - 1
        return new + (self._deltas[at] if at >= 0 else 0)
