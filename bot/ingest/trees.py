"""A commit's files read from its tree objects, trusting nothing a tree says.

`ls-tree -r` joins names with `/`, so an entry named `a/b` or `..` would pass
for a path; and `ls-tree --long` dies on the first blob the repository lacks.
Instead the trees are read here through `cat-file --batch` and parsed, so each
name is checked on its own, and blobs the repository lacks are found first
(`rev-list --missing=print`, which never fetches and never dies on them). An
entry that cannot be trusted becomes a row with a problem, skipped and counted
by the caller; the rest of the tree is listed as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bot.errors import SourceError
from bot.ingest.catfile import BlobReader
from bot.ingest.git import Git

log = logging.getLogger(__name__)

MAX_ENTRIES = 2_000_000  # a "git bomb" reuses one subtree until the listing is astronomical
MAX_PATH = 4096
TREE_MODE = "40000"
# Names git refuses to check out (`verify_path`), on any file system, and what would
# let a name pass for several path components or hide in a one-line citation.
_DOT_GIT = frozenset({".git", "git~1"})


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """A non-tree entry under the root; `problem` is "" or the skip reason for it."""

    path: str
    mode: str
    oid: str
    problem: str = ""


def missing_objects(git: Git, commit: str) -> set[str]:
    """Objects of `commit`'s tree the repository does not have (nothing is fetched)."""
    out = git.run("rev-list", "--objects", "--no-walk", "--missing=print", commit, "--")
    return {line[1:].decode("ascii") for line in out.splitlines() if line.startswith(b"?")}


def blob_sizes(git: Git, oids: Iterable[str]) -> dict[str, int]:
    """Size of each present blob; one `cat-file --batch-check` for all of them."""
    wanted = "".join(f"{oid}\n" for oid in dict.fromkeys(oids))
    if not wanted:
        return {}
    check = "--batch-check=%(objectname) %(objecttype) %(objectsize)"
    out = git.run("cat-file", check, input=wanted.encode("ascii"))
    sizes: dict[str, int] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def walk(reader: BlobReader, root: str, absent: set[str]) -> list[TreeEntry]:
    """Every non-tree entry under tree `root`, in no particular order.

    Each distinct tree is read once, however often it recurs, and the listing's
    size is known before it is expanded, so a tree bomb is refused in a moment.
    Trees in `absent` (known missing) are not requested: in a blobless clone,
    asking cat-file for a promised object that cannot be fetched kills it.
    """
    if root in absent:
        raise SourceError(f"The root tree {root[:12]} is missing from the repository.")
    trees = _read_trees(reader, root, absent)
    if _entry_count(trees, root) > MAX_ENTRIES:
        raise SourceError(
            f"The tree lists more than {MAX_ENTRIES:,} entries (a repeated subtree?); "
            "it is too large to index."
        )
    found: list[TreeEntry] = []
    warned = 0
    stack = [("", root)]
    while stack:
        prefix, oid = stack.pop()
        rows = trees[oid]
        if isinstance(rows, str):
            found.append(TreeEntry(prefix or ".", TREE_MODE, oid, rows))
            continue
        for mode, name, child, problem in rows:
            path = f"{prefix}/{name}" if prefix else name
            if not problem and len(path) > MAX_PATH:
                problem = "unsafe_path"
            if problem:
                if warned < 20:
                    log.warning("skipped tree entry %r: %s", path, problem)
                warned += 1
                found.append(TreeEntry(path, mode, child, problem))
            elif mode == TREE_MODE:
                stack.append((path, child))
            else:
                found.append(TreeEntry(path, mode, child))
    return found


_Row = tuple[str, str, str, str]  # mode, name, oid, problem ("" when the name is fine)


def _read_trees(reader: BlobReader, root: str, absent: set[str]) -> dict[str, list[_Row] | str]:
    """Every distinct tree under `root`: its rows, or why it cannot be read."""
    raw_size = len(root) // 2
    trees: dict[str, list[_Row] | str] = {}
    level = [root]
    while level:
        todo = [oid for oid in dict.fromkeys(level) if oid not in trees]
        trees.update((oid, "missing_tree") for oid in todo if oid in absent)
        wanted = [oid for oid in todo if oid not in absent]
        level = []
        for oid, kind, data in reader.read_objects(wanted):
            rows = _rows(oid, kind, data, raw_size)
            trees[oid] = rows
            if not isinstance(rows, str):
                level += [
                    child for mode, _, child, problem in rows if mode == TREE_MODE and not problem
                ]
        if len(trees) > MAX_ENTRIES:
            raise SourceError(f"The tree holds more than {MAX_ENTRIES:,} directories.")
    return trees


def _rows(oid: str, kind: str, data: bytes | None, raw_size: int) -> list[_Row] | str:
    if data is None:
        return "missing_tree"
    if kind != "tree":
        return "bad_tree"
    rows: list[_Row] = []
    try:
        for mode, raw_name, child in _parse_tree(data, raw_size):
            name, problem = _checked_name(raw_name)
            rows.append((mode, name, child, problem))
    except ValueError:
        log.warning("tree %s is malformed; its entries are skipped", oid[:12])
        return "bad_tree"
    return rows


def _entry_count(trees: dict[str, list[_Row] | str], root: str) -> int:
    """How many rows the expanded listing would have, counted per distinct tree."""
    counts: dict[str, int] = {}
    stack = [root]
    while stack:
        oid = stack[-1]
        rows = trees[oid]
        if isinstance(rows, str):
            counts[oid] = 1
            stack.pop()
            continue
        subtrees = [c for mode, _, c, problem in rows if mode == TREE_MODE and not problem]
        pending = [c for c in subtrees if c not in counts]
        if pending:
            stack += pending
            continue
        counts[oid] = min(
            MAX_ENTRIES + 1, len(rows) - len(subtrees) + sum(counts[c] for c in subtrees)
        )
        stack.pop()
    return counts[root]


def _parse_tree(data: bytes, raw_size: int) -> Iterator[tuple[str, bytes, str]]:
    """(mode, name, oid) for each entry of a raw tree object; ValueError if malformed.

    Modes come back canonical (`040000`, which git tolerates, is `40000`).
    """
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode, name = data[pos:space], data[space + 1 : nul]
        oid = data[nul + 1 : nul + 1 + raw_size]
        if len(oid) != raw_size or not mode.isdigit():
            raise ValueError("truncated tree entry")
        yield format(int(mode, 8), "o"), name, oid.hex()
        pos = nul + 1 + raw_size


def _checked_name(name: bytes) -> tuple[str, str]:
    """The entry's name as text, and "" or why it cannot be listed."""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return name.decode("utf-8", "replace"), "bad_path"
    return text, "unsafe_path" if _unsafe(text) else ""


def _unsafe(name: str) -> bool:
    if name in ("", ".", "..") or "/" in name or "\\" in name:
        return True
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return True  # a newline or escape code in a path would forge lines of an answer
    # Windows ignores trailing dots and spaces, so `.git. ` is `.git` there.
    return name.rstrip(". ").lower() in _DOT_GIT
