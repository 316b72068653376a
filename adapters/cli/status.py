"""A one-line status on the terminal while an answer is prepared ("searching billing…").

Shown only when the output is a terminal, in one line that each status
overwrites and that the answer's first text replaces (or, used as a context
manager, whatever is printed after the block); piped output never sees it.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console

from adapters.cli.plain import visible

_ERASE_LINE = "\r\x1b[2K"
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


class StatusLine:
    def __init__(self, console: Console) -> None:
        self._console = console
        self._shown = False

    def __call__(self, status: str) -> None:
        if not self._console.is_terminal:
            return
        width = max(self._console.width - 1, 10)  # one line, whatever the terminal's width
        self._write(f"{_ERASE_LINE}{_DIM}{visible(status)[:width]}{_RESET}")
        self._shown = True

    def __enter__(self) -> StatusLine:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.clear()  # an error printed next starts on a clean line

    def clear(self) -> None:
        if self._shown:
            self._write(_ERASE_LINE)
            self._shown = False

    def _write(self, text: str) -> None:
        self._console.file.write(text)
        self._console.file.flush()
