"""The terminal's two consoles: stdout for what a command prints, stderr for one-liners."""

from __future__ import annotations

import os
import sys

from rich.console import Console


def stdout_console() -> Console:
    """Nothing printed is read as markup; `say` wraps on a terminal, never in a pipe."""
    return _StdoutConsole(highlight=False, markup=False, emoji=False, soft_wrap=True)


def error_console() -> Console:
    """stderr, for errors and notices: one line each, never wrapped, never markup."""
    return Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        # Rich exits with status 1 here; a reader that left is no failure (see `run`).
        self.quiet = True
        raise BrokenPipeError


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into a closed pipe is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is no real file (a test's capture): nothing will flush to the pipe
    finally:
        os.close(devnull)
