"""Finding the processes a codecite process started for its data directory: its ingest
child, and whether they are all gone."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path


def processes_of(home: Path, command: bytes = b"") -> list[int]:
    """Processes (other than this one) whose environment names this data directory, and
    whose command line holds `command`."""
    marker = f"CODECITE_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            mine = marker in (entry / "environ").read_bytes().split(b"\0")
            if mine and command in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie is already gone, only not yet reaped
                    found.append(int(entry.name))
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


def ingest_child(home: Path, serve: subprocess.Popen[str], timeout: float = 90.0) -> int:
    """The ingest child (not multiprocessing's resource tracker), once it leads its own
    process group (so a Ctrl-C at the terminal reaches only serve)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and serve.poll() is None:
        for pid in processes_of(home, b"spawn_main"):
            with contextlib.suppress(ProcessLookupError):
                if os.getpgid(pid) == pid:
                    return pid
        time.sleep(0.05)
    serve.kill()
    raise AssertionError(f"no ingest process was started; the log:\n{serve.communicate()[1]}")


def gone_within(pids: list[int], home: Path, timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not set(pids) & set(processes_of(home)):
            return True
        time.sleep(0.1)
    return False
