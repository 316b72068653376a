"""Commits and their line changes, read from `git log -p -U0` and `git diff-tree`.

One `git log` lists the commits of a range, parents before children, each with its
diff against its first parent (a merge's too: `--diff-merges=first-parent`), zero
lines of context, renames detected. That is all a line attribution needs of most
merges: a line the same as in the first parent keeps that parent's attribution (git's
blame and `log -L` pass it to that parent too). Only the files that differ from the first
parent and from another parent as well need the merge's diff against that parent; they
are read afterwards (`add_merge_diffs`). Only hunk positions are kept,
plus the first changed lines of each commit as an excerpt; texts are scrubbed later.
Every option that a user's or repository's config could change is given explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bot.ingest.git import Git, first_line

Hunk = tuple[int, int, int, int]  # old start, old count, new start, new count (git's @@)

EXCERPT_LINES = 24
EXCERPT_WIDTH = 160
EXCERPT_READ = 8192  # the longest line read whole: a key block escaped in JSON
MERGE_THREADS = 3  # diff-trees of merges at once (git.py caps all git processes at 4)
MERGES_PER_CALL = 200  # merges one diff-tree compares with their other parents

# The diff `git log -L` draws (the gold of "who last changed X"): plain Myers without the
# indent heuristic `git diff` applies by default, which would slide an inserted block onto
# other lines (e.g. start it at a new function's decorator rather than end it on the next's).
_DIFF_OPTIONS = (
    "-p", "-U0", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
    "--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
    "--diff-algorithm=myers", "--no-indent-heuristic",
)  # fmt: skip
_CONFIG = ("-c", "core.quotePath=false", "-c", "diff.noprefix=false", "-c", "log.showRoot=true")
_FORMAT = "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%at%x1f%ct%x1f%s%x1f%b%x1d"
_OBJECT_LINE = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64})$", re.MULTILINE)
# Only these start a line with "diff --git " or "@@ " in a patch: every line of a hunk
# starts with "+", "-", " " or "\\" (so hunks are found without walking their lines).
_FILE = b"\ndiff --git "
_HUNK_START = b"\n@@ -"
_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@[^\n]*\n?")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(slots=True)
class FileDiff:
    old_path: str  # "" for an added file
    new_path: str  # "" for a deleted file
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False


@dataclass(slots=True)
class RawCommit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    authored: int
    committed: int
    subject: str
    body: str
    diffs: list[FileDiff] = field(default_factory=list)  # against the first parent
    excerpt: str = ""
    other_diffs: dict[int, list[FileDiff]] = field(default_factory=dict)  # parent index ->


def read_commits(
    git: Git,
    revisions: Sequence[str],
    *,
    max_count: int = 0,
    since_days: int = 0,
    config: Sequence[str] = (),
) -> list[RawCommit]:
    """The commits of `revisions` (e.g. ["HEAD"] or ["old..new"]), parents first;
    `config`: more `-c` options (`history_skips.undiffed_skips`)."""
    args = ["log", "--topo-order", "--reverse", "--diff-merges=first-parent", "--no-show-signature"]
    if max_count:
        args.append(f"--max-count={max_count}")
    if since_days:
        args.append(f"--since={since_days}.days.ago")
    out = git.run(*_CONFIG, *config, *args, *_DIFF_OPTIONS, _FORMAT, *revisions, "--")
    return list(parse_log(out))


def read_given(git: Git, shas: Sequence[str], *, config: Sequence[str] = ()) -> list[RawCommit]:
    """The commits `shas` exactly (no walk), in that order, diffed as `read_commits` does."""
    args = ["log", "--no-walk=unsorted", "--stdin", "--diff-merges=first-parent"]
    request = "".join(f"{sha}\n" for sha in shas).encode("ascii")
    out = git.run(
        *_CONFIG, *config, *args, "--no-show-signature", *_DIFF_OPTIONS, _FORMAT, input=request
    )
    return list(parse_log(out))


def list_commits(
    git: Git, revisions: Sequence[str], *, max_count: int = 0, since_days: int = 0
) -> tuple[list[RawCommit], str]:
    """The commits of `revisions` without their diffs (no tree or blob is read), newest
    first, as far as the walk reaches: with the error that stopped it ("" when none)."""
    args = ["log", "--no-patch", "--no-show-signature"]
    if max_count:
        args.append(f"--max-count={max_count}")
    if since_days:
        args.append(f"--since={since_days}.days.ago")
    code, out, err = git.attempt(*_CONFIG, *args, _FORMAT, *revisions, "--")
    records = out.split(b"\x1e")
    if code != 0 and records and b"\x1d" not in records[-1]:
        records.pop()  # cut off where git stopped
    return list(parse_log(b"\x1e".join(records))), first_line(err) if code != 0 else ""


def add_merge_diffs(
    git: Git,
    commits: Sequence[RawCommit],
    *,
    needed: Collection[str] | None = None,
    config: Sequence[str] = (),
) -> None:
    """Fill each merge's diffs against its other parents, for the files that differ from
    its first parent (nothing else can matter) and whose lines are `needed` (None: all).
    A raw comparison first (trees only, no blob is read; one `diff-tree --stdin` per batch
    of merges) finds the files that differ from that parent too; only those are diffed,
    in groups of merges that share their files (`_groups`): a file one merge needs is not
    diffed for another merge of its call that took it from the first parent."""
    merges = {c.sha: _merge_paths(c, needed) for c in commits if len(c.parents) > 1}
    work = [(c, i) for c in commits if merges.get(c.sha) for i in range(1, len(c.parents))]
    batches = [work[i : i + MERGES_PER_CALL] for i in range(0, len(work), MERGES_PER_CALL)]

    def differing(batch: list[tuple[RawCommit, int]]) -> list[set[str]]:
        return _differing(git, batch, set().union(*(merges[c.sha] for c, _ in batch)))

    def diff(group: _Group) -> list[list[FileDiff]]:
        out = _diff_tree(git, group.items, group.paths, _DIFF_OPTIONS, config)
        return [parse_patch(block)[0] for block in _blocks(out)]

    with ThreadPoolExecutor(MERGE_THREADS, thread_name_prefix="history-merge") as pool:
        differ = [d for found in pool.map(differing, batches) for d in found]
        for commit, index in work:
            commit.other_diffs[index] = []
        groups = _groups(work, [merges[c.sha] for c, _ in work], differ)
        for group, found in zip(groups, pool.map(diff, groups), strict=True):
            for (commit, index), diffs in zip(group.items, found, strict=False):
                commit.other_diffs[index] = diffs


@dataclass(slots=True)
class _Group:
    """Merges diffed by one call, and the files diffed for all of them."""

    items: list[tuple[RawCommit, int]] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)
    # per item: the files it needs, and those that differ from its parent
    own: list[tuple[set[str], set[str]]] = field(default_factory=list)

    def takes(self, need: set[str], differ: set[str]) -> bool:
        """Whether adding an item diffs no file that some member does not need."""
        paths = self.paths | need
        return (paths & differ) <= need and all((paths & d) <= n for n, d in self.own)


def _groups(
    work: Sequence[tuple[RawCommit, int]],
    wanted: Sequence[set[str]],
    differ: Sequence[set[str]],
) -> list[_Group]:
    """Merges (with the files each needs diffed: wanted and differing) packed greedily,
    biggest needs first, so that no call diffs a file for a merge that does not need it."""
    items = [(item, w & d, d) for item, w, d in zip(work, wanted, differ, strict=True) if w & d]
    items.sort(key=lambda t: -len(t[1]))
    groups: list[_Group] = []
    for item, need, diff in items:
        group = next((g for g in groups if g.takes(need, diff)), None)
        if group is None:
            group = _Group()
            groups.append(group)
        group.items.append(item)
        group.paths |= need
        group.own.append((need, diff))
    return groups


def _merge_paths(commit: RawCommit, needed: Collection[str] | None) -> set[str]:
    paths = {p for d in commit.diffs for p in (d.old_path, d.new_path) if p}
    return paths if needed is None else {p for p in paths if p in needed}


def _diff_tree(
    git: Git,
    batch: Sequence[tuple[RawCommit, int]],
    paths: Iterable[str],
    options: Sequence[str],
    config: Sequence[str] = (),
) -> bytes:
    request = "".join(f"{c.sha} {c.parents[i]}\n" for c, i in batch).encode("ascii")
    return git.run(
        *_CONFIG, *config, "diff-tree", "--stdin", "--always", "-r", *options,
        "--", *(f":(literal){p}" for p in sorted(paths)), input=request,
    )  # fmt: skip


def _differing(git: Git, batch: Sequence[tuple[RawCommit, int]], paths: set[str]) -> list[set[str]]:
    """Per merge of `batch`, the files among `paths` that differ from that parent."""
    out = _diff_tree(git, batch, paths, ("--raw", "--no-renames", "--no-abbrev"))
    found: list[set[str]] = []
    for block in _blocks(out):
        names = set()
        for line in block.split(b"\n"):
            if line.startswith(b":") and b"\t" in line:
                names.add(_path(line.split(b"\t", 1)[1]) or "")
        found.append(names)
    return found + [set() for _ in range(len(batch) - len(found))]


def _blocks(out: bytes) -> list[bytes]:
    """`diff-tree --stdin` output cut at each commit line (a bare object id)."""
    marks = list(_OBJECT_LINE.finditer(out))
    ends = [m.start() for m in marks[1:]] + [len(out)]
    return [out[m.end() + 1 : end] for m, end in zip(marks, ends, strict=True)]


def blob_ids(
    git: Git, revisions: Sequence[str], *, max_count: int = 0, since_days: int = 0
) -> set[str]:
    """Every blob the diffs of these commits read, against every parent (for blobless
    clones, which fetch them first): a raw listing reads no blob."""
    args = ["log", "--topo-order", "-m", "--raw", "--no-renames", "--no-abbrev", "--format=%x1e"]
    if max_count:
        args.append(f"--max-count={max_count}")
    if since_days:
        args.append(f"--since={since_days}.days.ago")
    out = git.run(*_CONFIG, *args, *revisions, "--")
    found: set[str] = set()
    for line in out.split(b"\n"):
        if line.startswith(b":"):
            fields = line.split(b"\t", 1)[0].split()
            for oid in fields[2:4]:
                if oid.strip(b"0"):
                    found.add(oid.decode("ascii"))
    return found


def parse_log(out: bytes) -> Iterator[RawCommit]:
    for record in out.split(b"\x1e")[1:]:
        header, _, patch = record.partition(b"\x1d")
        fields = header.decode("utf-8", "replace").split("\x1f")
        if len(fields) < 8:
            continue
        sha, parents, author, email, at, ct, subject, body = fields[:8]
        diffs, excerpt = parse_patch(patch)
        yield RawCommit(
            sha=sha.strip(),
            parents=tuple(parents.split()),
            author=author,
            email=email,
            authored=_int(at),
            committed=_int(ct),
            subject=subject.strip(),
            body=body.strip(),
            diffs=diffs,
            excerpt=excerpt,
        )


def parse_patch(patch: bytes) -> tuple[list[FileDiff], str]:
    """File diffs of a `-p -U0` patch, and its first changed lines as an excerpt."""
    diffs: list[FileDiff] = []
    excerpt: list[str] = []
    patch = b"\n" + patch  # every header now follows a newline
    starts = _line_starts(patch, _FILE, 0, len(patch))
    for start, end in zip(starts, [*starts[1:], len(patch)], strict=False):
        hunks = [
            match
            for at in _line_starts(patch, _HUNK_START, start, end)
            if (match := _HUNK.match(patch, at, end)) is not None
        ]
        header = patch[start + len(_FILE) - 1 : hunks[0].start() if hunks else end]
        lines = header.split(b"\n")
        current = FileDiff(*_header_paths(lines[0]))
        for line in lines[1:]:
            _header_line(current, line)
        diffs.append(current)
        for match in hunks:
            a, b, c, d = (int(g) if g is not None else 1 for g in match.groups())
            current.hunks.append((a, b, c, d))
            if len(excerpt) < EXCERPT_LINES:
                _add_excerpt(excerpt, current, patch, match.end(), end, b + d)
    return diffs, "\n".join(excerpt)


def _line_starts(data: bytes, marker: bytes, start: int, end: int) -> list[int]:
    """Where the lines that `marker` ("\\n" + their start) opens begin, in data[start:end]."""
    found = []
    at = data.find(marker, start, end)
    while at >= 0:
        found.append(at + 1)
        at = data.find(marker, at + len(marker), end)
    return found


def _add_excerpt(
    excerpt: list[str], diff: FileDiff, patch: bytes, pos: int, end: int, count: int
) -> None:
    """Up to `count` lines of a hunk's body from `pos` (until the excerpt is full)."""
    name = f"{diff.new_path or diff.old_path}:"
    if not excerpt or excerpt[-1] != name:
        excerpt.append(name)
    for _ in range(min(count, EXCERPT_LINES - len(excerpt))):
        if pos >= end:
            return
        stop = patch.find(b"\n", pos, end)
        stop = end if stop < 0 else stop
        # Cut after scrubbing (`scrub_excerpt`): a token cut first is not found.
        excerpt.append(patch[pos : min(stop, pos + EXCERPT_READ)].decode("utf-8", "replace"))
        pos = stop + 1


def _header_line(current: FileDiff, line: bytes) -> None:
    if line.startswith(b"--- "):
        path = _path(line[4:])
        current.old_path = "" if path is None else path.removeprefix("a/")
    elif line.startswith(b"+++ "):
        path = _path(line[4:])
        current.new_path = "" if path is None else path.removeprefix("b/")
    elif line.startswith(b"rename from "):
        current.old_path = _path(line[len(b"rename from ") :]) or current.old_path
    elif line.startswith(b"rename to "):
        current.new_path = _path(line[len(b"rename to ") :]) or current.new_path
    elif line.startswith(b"new file mode"):
        current.old_path = ""
    elif line.startswith(b"deleted file mode"):
        current.new_path = ""
    elif line.startswith(b"Binary files "):
        current.binary = True


def _header_paths(rest: bytes) -> tuple[str, str]:
    """Both paths of `a/P b/P` (the same path; others come from the lines that follow)."""
    if rest.startswith(b'"'):
        return "", ""  # quoted: the ---/+++ or rename lines name it
    size = (len(rest) - 5) // 2
    if (
        size > 0
        and rest[: 2 + size] == b"a/" + rest[2 : 2 + size]
        and rest[2 + size :] == b" b/" + rest[2 : 2 + size]
    ):
        path = rest[2 : 2 + size].decode("utf-8", "surrogateescape")
        return path, path
    return "", ""


def _path(raw: bytes) -> str | None:
    """A path as git prints it (C-quoted when it must be); None for /dev/null."""
    text = raw.rstrip(b"\r")
    if text == b"/dev/null":
        return None
    if not (text.startswith(b'"') and text.endswith(b'"') and len(text) >= 2):
        return text.split(b"\t", 1)[0].decode("utf-8", "surrogateescape")
    return unquote(text[1:-1].decode("latin-1"))


def unquote(body: str) -> str:
    """Undo git's C-style quoting (octal escapes are bytes of UTF-8)."""
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out += ch.encode("latin-1")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif body[i + 1 : i + 4].isdigit():
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out += nxt.encode("latin-1")
            i += 2
    return out.decode("utf-8", "surrogateescape")


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        return 0
