"""`codecite` on a real pseudo-terminal: its stdin, stdout and stderr are the terminal, which is
its controlling terminal, of a known size; the test types keys and reads what the screen gets.

    with TerminalSession(home, "chat", columns=60) as term:
        term.expect("you> ")
        term.type("where is the discount?\\r")
        screen = term.expect("you> ")
        term.type(CTRL_D)
        term.finish()              # exit status; term.output is everything written
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from types import TracebackType

from tests.support.cli import ROOT

CTRL_C, CTRL_D, UP = b"\x03", b"\x04", b"\x1b[A"
ANSI_FREE_ENV = {"TERM": "xterm-256color", "NO_COLOR": "1"}


class TerminalSession:
    def __init__(
        self,
        home: Path,
        *args: str,
        columns: int = 80,
        env: dict[str, str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        controller, terminal = pty.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        full_env = {
            k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")
        }
        full_env.update({**ANSI_FREE_ENV, **(env or {}), "CODECITE_HOME": str(home)})
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.cli.main", *args],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=full_env,
            cwd=ROOT,
            start_new_session=True,  # a session of its own: the terminal becomes its controlling one
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(terminal)
        self._controller = controller
        self._timeout = timeout  # for each expect and for finish: a loaded machine is slow
        self._deadline = time.monotonic() + timeout
        self.output = b""

    def __enter__(self) -> TerminalSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        os.close(self._controller)

    def type(self, keys: bytes | str) -> None:
        os.write(self._controller, keys.encode() if isinstance(keys, str) else keys)

    def expect(self, text: str, *, after: int | None = None) -> str:
        """Read until `text` appears (after position `after`, default: what was already
        read); everything read so far, decoded."""
        start = len(self.output) if after is None else after
        needle = text.encode()
        self._deadline = time.monotonic() + self._timeout
        while needle not in self.output[start:]:
            if not self._read_some():
                alive = "running" if self._proc.poll() is None else "ended"
                raise AssertionError(
                    f"{text!r} never appeared ({alive}); the screen got {self.text!r}"
                )
        return self.text

    def finish(self) -> int:
        """Read until the program ends; its exit status."""
        self._deadline = time.monotonic() + self._timeout
        while self._read_some():
            pass
        return self._proc.wait(timeout=10)

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")

    def _read_some(self) -> bool:
        """One read; False once the program has closed the terminal or time is up."""
        while time.monotonic() < self._deadline:
            ready, _, _ = select.select([self._controller], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self._controller, 4096)
                except OSError:  # the child closed the terminal
                    return False
                if not data:
                    return False
                self.output += data
                return True
            if self._proc.poll() is not None:
                return False
        return False
