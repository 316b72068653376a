"""The chat's input: line editing and history on a terminal, plain lines from a pipe.

On a terminal, lines are read with the standard `readline` (GNU readline, or libedit
on macOS): arrows, Ctrl-A/Ctrl-E, reverse search (Ctrl-R), Tab completion of the chat
commands, and a history kept in `CODECITE_HOME/chat_history` (private to its owner,
consecutive repeats stored once, the last `HISTORY_LINES` kept). Where Python has no
readline (Windows), the terminal's own line input is used. Ctrl-C drops the line being
typed; Ctrl-D on an empty line ends the input, leaving the cursor on a fresh line.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TextIO

HISTORY_LINES = 1000
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _readline() -> ModuleType | None:
    try:
        import readline
    except ImportError:  # no readline on this platform: plain input()
        return None
    return readline


class LineReader:
    """Iterate for the lines typed (stripped, never empty) until the input ends."""

    def __init__(
        self,
        source: TextIO,
        *,
        prompt: str = "",
        history: Path | None = None,
        words: Sequence[str] = (),
    ) -> None:
        self._source = source
        self._prompt = prompt
        self._history = history
        # readline edits only when both ends are the terminal (as `input` requires)
        self.interactive = source.isatty()
        self._editing = self.interactive and source is sys.stdin and sys.stdout.isatty()
        self._readline = _readline() if self._editing else None
        if self._readline is not None:
            self._set_up(self._readline, words)

    def __iter__(self) -> Iterator[str]:
        while True:
            try:
                line = self._read()
            except KeyboardInterrupt:  # Ctrl-C: drop the line, ask again
                sys.stdout.write("\n")
                continue
            if line is None:
                return
            text = line.strip()
            if text:
                self._remember(text)
                yield text

    def _read(self) -> str | None:
        if self._editing:
            try:
                return input(_for_readline(self._prompt))
            except EOFError:  # Ctrl-D: the shell's prompt must start on a line of its own
                sys.stdout.write("\n")
                sys.stdout.flush()
                return None
        if self.interactive:  # a terminal, but the answers go elsewhere: prompt there
            sys.stderr.write(_ANSI.sub("", self._prompt))
            sys.stderr.flush()
        line = self._source.readline()
        return line or None

    def _set_up(self, readline: ModuleType, words: Sequence[str]) -> None:
        readline.set_auto_history(False)  # added by `_remember`: repeats stored once
        readline.set_history_length(HISTORY_LINES)
        if self._history is not None:
            with contextlib.suppress(OSError):
                readline.read_history_file(str(self._history))
        readline.set_completer_delims(" \t\n")
        readline.set_completer(_completer(readline, words))
        if "libedit" in (readline.__doc__ or ""):
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")

    def _remember(self, text: str) -> None:
        readline = self._readline
        if readline is None:
            return
        last = readline.get_history_item(readline.get_current_history_length())
        if text == last:
            return
        readline.add_history(text)
        if self._history is not None:
            with contextlib.suppress(OSError):
                _append(readline, self._history)


def _append(readline: ModuleType, path: Path) -> None:
    """Add the newest line to the history file (private: it holds the questions asked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    full = readline.get_current_history_length() >= HISTORY_LINES
    if full or not hasattr(readline, "append_history_file"):  # some libedit builds lack it
        readline.write_history_file(str(path))  # the whole history, the last HISTORY_LINES
    else:
        readline.append_history_file(1, str(path))


def _completer(readline: ModuleType, words: Sequence[str]) -> object:
    """Tab completes a command word at the start of the line."""

    def complete(text: str, state: int) -> str | None:
        if readline.get_begidx() != 0:
            return None
        matches = [w for w in words if w.startswith(text)]
        return matches[state] + " " if state < len(matches) else None

    return complete


def _for_readline(prompt: str) -> str:
    """Colour codes marked as taking no room, so readline knows where the cursor is."""
    return _ANSI.sub(lambda m: f"\x01{m.group(0)}\x02", prompt)
