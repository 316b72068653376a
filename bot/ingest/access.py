"""Whether this process may read a local repository, told in one sentence naming the path.

Operators mount checkouts into containers whose user owns nothing there: a directory it may
not list, a `.git` it may not enter, a parent it may not pass through. The operating system
answers such reads with a bare EACCES; these helpers find the path that refused and say so,
so `codecite index /src` ends in one line instead of an incident.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from bot.errors import SourceError

_EFFECTIVE = os.access in os.supports_effective_ids  # judge as the user we run as


def unreadable(path: Path) -> SourceError:
    return SourceError(
        f"{path} cannot be read by the user codecite runs as (uid {os.geteuid()}); "
        "make it readable to that user, or run codecite as its owner."
    )


def first_denied(paths: Iterable[Path]) -> Path | None:
    """The first of `paths` (or a directory on the way to one) that this process may not
    read, or None when every one that exists is readable."""
    for path in paths:
        for parent in reversed(path.parents):  # `/` first: the outermost refusal is the cause
            if not _may(parent, os.X_OK):
                return parent
        mode = os.R_OK | (os.X_OK if path.is_dir() else 0)
        if os.path.lexists(path) and not _may(path, mode):
            return path
    return None


def check_listable(root: Path) -> None:
    """SourceError naming `root` (or the directory above it that refuses) unless it lists."""
    try:
        with os.scandir(root):
            return
    except PermissionError as exc:
        raise unreadable(first_denied([root]) or root) from exc


def _may(path: Path, mode: int) -> bool:
    return os.access(path, mode, effective_ids=_EFFECTIVE)
