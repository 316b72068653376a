"""Watch the processes this test starts: count them, and stop a runaway before it hurts.

A regression in how git is bounded can fork without end (a blobless clone of a
shallow source once spawned thousands of nested `git fetch`). The watch kills
every git process it started (and their children) once more than `kill_above` are alive, so a failing test
fails quickly instead of taking the machine down.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time


def git_processes(root: int) -> dict[int, str]:
    """pid -> name of every live git process under `root`, with everything git started.

    Other descendants (a PostgreSQL server started for the suite) are not git's.
    """
    children, names = _process_table()
    under_root = _below(root, children)
    gits = [pid for pid in under_root if names.get(pid, "").startswith("git")]
    found: set[int] = set(gits)
    for pid in gits:
        found |= _below(pid, children)
    return {pid: names.get(pid, "?") for pid in found}


def _process_table() -> tuple[dict[int, list[int]], dict[int, str]]:
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
        names[int(entry)] = stat[stat.index("(") + 1 : stat.rindex(")")]
    return children, names


def _below(root: int, children: dict[int, list[int]]) -> set[int]:
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class ProcessWatch:
    """`with ProcessWatch() as watch: ...` then `watch.peak`, `watch.seen`, `watch.stormed`."""

    def __init__(self, kill_above: int = 40, every: float = 0.005) -> None:
        self.kill_above = kill_above
        self.every = every
        self.peak = 0  # most git processes alive at one sample
        self.seen: set[int] = set()  # git pids sampled (short-lived ones can slip between)
        self.stormed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ProcessWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._kill_all()  # nothing a test started outlives it

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            alive = git_processes(me)
            gits = {pid for pid, name in alive.items() if name.startswith("git")}
            self.seen |= gits
            self.peak = max(self.peak, len(gits))
            if len(alive) > self.kill_above:
                self.stormed = True
                self._kill_all()
            time.sleep(self.every)

    def _kill_all(self) -> None:
        for _ in range(100):
            alive = git_processes(os.getpid())
            if not alive:
                return
            for pid in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
