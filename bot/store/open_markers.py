"""Marker files that tell, at the next opening, whether a process died with a file open.

`.NAME.open-<pid>-<n>` sits beside the file while it is open here. One left by
a process that no longer runs means that process stopped without closing the
file (killed, or the machine lost power): an unclean stop, worth a check.
A normal interpreter exit removes this process's markers.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import threading
from contextlib import suppress
from pathlib import Path

log = logging.getLogger(__name__)

_counter = itertools.count(1)
_live_markers: set[Path] = set()
_markers_lock = threading.Lock()


class OpenMarker:
    """`.NAME.open-<pid>-<n>` beside the file while it is open here; one left by a dead
    process means that process stopped without closing the file."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._mine: Path | None = None

    def place(self) -> bool:
        """Put our marker down; True when a dead process left one (an unclean stop)."""
        unclean = False
        prefix = f".{self._path.name}.open-"
        try:
            for marker in self._path.parent.glob(f"{prefix}*"):
                pid = marker.name[len(prefix) :].partition("-")[0]
                if pid.isdigit() and not _alive(int(pid)):
                    unclean = True
                    marker.unlink(missing_ok=True)
            if self._mine is None:
                mine = self._path.with_name(f"{prefix}{os.getpid()}-{next(_counter)}")
                mine.touch()
                self._mine = mine
                with _markers_lock:
                    _live_markers.add(mine)
        except OSError as exc:  # a marker is a hint: never a reason not to open
            log.debug("open marker for %s: %s", self._path, exc)
        return unclean

    def remove(self) -> None:
        if self._mine is None:
            return
        self._mine.unlink(missing_ok=True)
        with _markers_lock:
            _live_markers.discard(self._mine)
        self._mine = None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


@atexit.register
def _remove_live_markers() -> None:
    """A normal interpreter exit is a clean stop: committed data is safe in the file."""
    mine = f".open-{os.getpid()}-"  # a forked child inherits the set, not the files
    with _markers_lock:
        for marker in _live_markers:
            if mine in marker.name:
                with suppress(OSError):
                    marker.unlink(missing_ok=True)
        _live_markers.clear()
