"""Shared helpers for the speed benchmarks: child processes, the two venvs, statistics.

Every measurement runs in a fresh child process so its peak RSS (from
`os.wait4`'s rusage: the child's own high-water mark, or a waited-for
grandchild's if larger) belongs to that measurement alone. Output goes to
files, not pipes, so a chatty child can never block.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
OURS_PYTHON = ROOT / ".venv" / "bin" / "python"
PEER_PYTHON = ROOT / ".venv-bench" / "bin" / "python"
# Variables that would switch codecite to dense search or a remote index: the benchmarks
# measure the embedded default with no API keys.
MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODECITE_INDEX", "PINECONE_API_KEY")


@dataclass(frozen=True, slots=True)
class ChildResult:
    out: dict[str, Any] | None  # the child's last JSON line; None if it failed or timed out
    wall: float  # seconds, process start to exit
    peak_rss: int  # bytes
    timed_out: bool = False
    error: str = ""
    first_line: float | None = None  # seconds to the first line on stdout, when asked for
    cpu: float = 0.0  # user + system seconds (less swayed than `wall` by a busy machine)


def python_for(system: str, peer_python: Path | None = None) -> Path:
    if system == "peer":
        return peer_python or PEER_PYTHON
    return OURS_PYTHON if OURS_PYTHON.exists() else Path(sys.executable)


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_ENV}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra or {})
    return env


def run_child(
    python: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    json_line: bool = True,
    first_line: bool = False,
) -> ChildResult:
    """Run `python args...` (which prints one JSON line last); measure wall time and peak RSS.

    `python` may be any executable (a console script); with `json_line=False` its output is
    not read and a zero exit gives `out={}`. `first_line=True` reads stdout through a pipe
    to time its first line (a search's first result, before the process tears down).
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(python), *args],
            stdout=subprocess.PIPE if first_line else out,
            stderr=err,
            text=True,
            env=child_env(env),
            cwd=ROOT,
            start_new_session=True,  # so a timeout can stop the child and anything it started
        )
        reader = _FirstLine(proc.stdout, started) if first_line else None
        fired = threading.Event()
        timer = threading.Timer(timeout or 0, _kill_group, (proc.pid, fired))
        if timeout:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = reader.text() if reader else out.read(), err.read()
    rss = usage.ru_maxrss * 1024  # Linux reports KiB
    result = _result(proc.returncode, stdout, stderr, wall, rss, json_line=json_line)
    if fired.is_set():
        result = ChildResult(None, wall, rss, True, f"timed out after {timeout:.0f}s")
    cpu = usage.ru_utime + usage.ru_stime
    return replace(result, first_line=reader.seconds if reader else None, cpu=cpu)


def _result(
    returncode: int, stdout: str, stderr: str, wall: float, rss: int, *, json_line: bool
) -> ChildResult:
    if returncode != 0:
        return ChildResult(None, wall, rss, error=_tail(stderr))
    if not json_line:
        return ChildResult({}, wall, rss)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        return ChildResult(None, wall, rss, error="no result line: " + _tail(stderr))
    return ChildResult(json.loads(lines[-1]), wall, rss)


class _FirstLine(threading.Thread):
    """Drains a child's stdout pipe, noting when its first line arrived."""

    def __init__(self, pipe: IO[str] | None, started: float) -> None:
        super().__init__(name="child-stdout", daemon=True)
        self.pipe, self.started = pipe, started
        self.seconds: float | None = None
        self.lines: list[str] = []
        self.start()

    def run(self) -> None:
        for line in self.pipe or ():
            if self.seconds is None:
                self.seconds = time.perf_counter() - self.started
            self.lines.append(line)

    def text(self) -> str:
        self.join()
        return "".join(self.lines)


def _kill_group(pid: int, fired: threading.Event) -> None:
    fired.set()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _tail(text: str, limit: int = 1500) -> str:
    return text.strip()[-limit:]


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 1]."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def ratio(ours: float, peer: float) -> float | None:
    return round(ours / peer, 3) if peer else None


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def emit(result: Mapping[str, Any]) -> None:
    """A child's result: one JSON line on stdout."""
    print(json.dumps(dict(result)), flush=True)
