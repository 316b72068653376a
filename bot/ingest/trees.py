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
TREE_MODE = b"40000"
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

    Trees in `absent` (known missing) are not requested: in a blobless clone,
    asking cat-file for a promised object that cannot be fetched kills it.
    """
    if root in absent:
        raise SourceError(f"The root tree {root[:12]} is missing from the repository.")
    raw_size = len(root) // 2
    found: list[TreeEntry] = []
    level: list[tuple[str, str]] = [("", root)]
    while level:
        below: list[tuple[str, str]] = []
        present = [(prefix, oid) for prefix, oid in level if oid not in absent]
        found.extend(
            TreeEntry(p or ".", "40000", o, "missing_tree") for p, o in level if o in absent
        )
        replies = reader.read_objects(oid for _, oid in present)
        for (prefix, oid), (_, kind, data) in zip(present, replies, strict=True):
            if data is None or kind != "tree":
                found.append(
                    TreeEntry(
                        prefix or ".", "40000", oid, "missing_tree" if data is None else "bad_tree"
                    )
                )
                continue
            try:
                rows = list(_parse_tree(data, raw_size))
            except ValueError:
                log.warning("tree %s at %r is malformed; skipped", oid[:12], prefix or ".")
                found.append(TreeEntry(prefix or ".", "40000", oid, "bad_tree"))
                continue
            for mode, name, child in rows:
                path, problem = _checked_path(prefix, name)
                if problem:
                    log.warning("skipped tree entry %r in %r: %s", path, prefix or ".", problem)
                    found.append(TreeEntry(path, mode.decode("ascii", "replace"), child, problem))
                elif mode == TREE_MODE:
                    below.append((path, child))
                else:
                    found.append(TreeEntry(path, mode.decode("ascii"), child))
            if len(found) + len(below) > MAX_ENTRIES:
                raise SourceError(
                    f"The tree lists more than {MAX_ENTRIES:,} entries (a repeated subtree?); "
                    "it is too large to index."
                )
        level = below
    return found


def _parse_tree(data: bytes, raw_size: int) -> Iterator[tuple[bytes, bytes, str]]:
    """(mode, name, oid) for each entry of a raw tree object; ValueError if malformed."""
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode, name = data[pos:space], data[space + 1 : nul]
        oid = data[nul + 1 : nul + 1 + raw_size]
        if len(oid) != raw_size or not mode.isdigit():
            raise ValueError("truncated tree entry")
        yield mode, name, oid.hex()
        pos = nul + 1 + raw_size


def _checked_path(prefix: str, name: bytes) -> tuple[str, str]:
    """The entry's path, and "" or why it cannot be listed."""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return _join(prefix, name.decode("utf-8", "replace")), "bad_path"
    path = _join(prefix, text)
    if _unsafe(text) or len(path) > MAX_PATH:
        return path, "unsafe_path"
    return path, ""


def _unsafe(name: str) -> bool:
    if name in ("", ".", "..") or "/" in name or "\\" in name:
        return True
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return True  # a newline or escape code in a path would forge lines of an answer
    # Windows ignores trailing dots and spaces, so `.git. ` is `.git` there.
    return name.rstrip(". ").lower() in _DOT_GIT


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name
