"""A repository's directory tree summarised to a few lines: where the code is, and how much.

Directories are shown with their file counts; which ones are opened up is
decided within a line budget, code first (largest first), then tests, docs,
examples and configuration, so a repository whose tests outnumber its code
still shows the code's structure. An opened directory lists its
subdirectories, then its files on one line.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from bot.retrieval.intent import file_kind

KEEP_FILES = 40  # a directory's file names are kept when it has at most this many
KEEP_DEPTH = 5  # directory levels kept in a built tree
MAX_LEVELS = 3  # levels opened below the root when rendering
NAMES_PER_LINE = 6  # file names listed on a directory's one line of files


@dataclass(frozen=True, slots=True)
class DirNode:
    """One directory; a chain of single-child directories is one node (`src/main/java`)."""

    name: str
    kind: str  # "code", "test", "doc", "example" or "config", from its path
    total: int  # files at any depth below
    direct: int  # files directly inside
    files: tuple[str, ...]  # their names, kept only when there are few
    dirs: tuple[DirNode, ...]  # code first, then largest first


class _Dir:
    __slots__ = ("dirs", "files")

    def __init__(self) -> None:
        self.files: list[str] = []
        self.dirs: dict[str, _Dir] = {}


# A file name may hold any byte but "/" and NUL; a line break in one must not break a layout.
_CONTROL = {c: "?" for c in range(32)} | {127: "?"}


def one_line(text: str) -> str:
    """`text` with control characters (line breaks included) shown as `?`."""
    return text.translate(_CONTROL)


def build_tree(paths: Iterable[str]) -> DirNode:
    root = _Dir()
    for path in paths:
        *parts, name = one_line(path).split("/")
        node = root
        for part in parts:
            node = node.dirs.setdefault(part, _Dir())
        node.files.append(name)
    return _freeze("", "", root, 0)


def _freeze(name: str, path: str, node: _Dir, depth: int) -> DirNode:
    while not node.files and len(node.dirs) == 1 and name:  # collapse `a/b/c` chains
        (child_name, child), *_ = node.dirs.items()
        name, path, node = f"{name}/{child_name}", f"{path}/{child_name}", child
    children = [
        _freeze(n, f"{path}/{n}" if path else n, d, depth + 1) for n, d in node.dirs.items()
    ]
    children.sort(key=lambda c: (c.kind != "code", -c.total, c.name))
    return DirNode(
        name=name,
        kind=_kind(path),
        total=len(node.files) + sum(c.total for c in children),
        direct=len(node.files),
        files=tuple(sorted(node.files, key=_file_order)) if len(node.files) <= KEEP_FILES else (),
        dirs=tuple(children) if depth < KEEP_DEPTH else (),
    )


def tree_lines(root: DirNode, *, lines: int, entries: int) -> list[str]:
    """The tree as indented lines, about `lines` of them, at most `entries` per directory."""
    opened = _opened(root, lines, entries)
    out: list[str] = []

    def emit(node: DirNode, level: int) -> None:
        for text, child in _rows(node, opened[id(node)], level):
            out.append("  " * level + text)
            if child is not None and id(child) in opened:
                emit(child, level + 1)

    emit(root, 0)
    return out


def _opened(root: DirNode, lines: int, entries: int) -> dict[int, int]:
    """Which directories show their contents, and how many entries each: code first, largest
    first, until one does not fit even with fewer entries. The largest always gets a few lines."""
    opened = {id(root): entries}
    used = len(_rows(root, entries, 0))
    lines = max(lines, used + 4)
    queue: list[tuple[bool, int, int, DirNode, int]] = []
    order = 0

    def offer(node: DirNode, level: int) -> None:
        nonlocal order
        for _, child in _rows(node, opened[id(node)], level):
            if child is not None and level + 1 <= MAX_LEVELS:
                heapq.heappush(queue, (child.kind != "code", -child.total, order, child, level + 1))
                order += 1

    offer(root, 0)
    while queue:
        *_, node, level = heapq.heappop(queue)
        fits = _fitting(node, entries, level, lines - used)
        if fits is None:
            if _rows(node, 2, level):
                break  # what follows matters less than what did not fit
            continue
        opened[id(node)] = fits
        used += len(_rows(node, fits, level))
        offer(node, level)
    return opened


def _fitting(node: DirNode, entries: int, level: int, room: int) -> int | None:
    """The most entries (down to 2) with which `node` opens within `room` lines, or None."""
    for n in range(entries, 1, -1):
        rows = _rows(node, n, level)
        if not rows:
            return None
        if len(rows) <= room:
            return n
    return None


def _rows(node: DirNode, entries: int, level: int) -> list[tuple[str, DirNode | None]]:
    """A directory's lines when opened: subdirectories with counts, then its files.

    Code directories (and the top level) name their files on one line; others
    only count them. Empty when opening would only repeat the directory's own line.
    """
    shown = node.dirs[:entries]
    rows: list[tuple[str, DirNode | None]] = [
        (f"{child.name}/ ({_files(child.total)})", child) for child in shown
    ]
    hidden = node.dirs[entries:]
    if hidden:
        noun = "directory" if len(hidden) == 1 else "directories"
        rows.append((f"… {len(hidden)} more {noun} ({_files(sum(c.total for c in hidden))})", None))
    if node.files and (node.kind == "code" or level == 0):
        names = node.files[:NAMES_PER_LINE]
        more = node.direct - len(names)
        rows.append((", ".join(names) + (f", … +{more} more" if more else ""), None))
    elif node.direct and (node.dirs or level == 0):
        rows.append((f"+ {_files(node.direct)}", None))
    return rows


def _kind(path: str) -> str:
    if not path:
        return "code"
    if any(part.startswith(".") for part in path.split("/")):
        return "config"  # .github, .devcontainer, .vscode: tooling, not the code
    return file_kind(f"{path}/_")


def _file_order(name: str) -> tuple[bool, str]:
    return name.startswith("."), name.lower()  # dotfiles last: they rarely say much


def _files(n: int) -> str:
    return f"{n:,} file" if n == 1 else f"{n:,} files"
