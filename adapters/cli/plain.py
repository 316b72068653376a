"""Text on the terminal exactly as written: never read as markup, wrapped only on a terminal.

Answers, errors and command replies carry characters that look like markup
(`[repo]`, `[[repos]]`, `__init__.py`, `:id:`); they are written as they are.
On a terminal, prose is wrapped at spaces to the terminal's width: a word (a
path, a URL) is never split, a list item's continuation lines line up under its
text, and fenced code is left alone (the terminal folds a long code line for
display; copying it gives the line back whole). Piped output is never wrapped.
Control characters are shown as symbols (␛) so that repository text cannot move
the cursor or retitle the terminal.

    say(console, "error: list them as [[repos]] in codecite.toml", wrap=False)
    wrapper = Wrapper(console.width)          # for text that arrives in pieces
    out = wrapper.feed(piece) + ... + wrapper.end()
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

_PICTURES = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in "\t\n"}
_VISIBLE = str.maketrans(
    {**_PICTURES, 0x0D: None, 0x7F: "\u2421", **dict.fromkeys(range(0x80, 0xA0), "\ufffd")}
)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+")
_DEFINITION = re.compile(r"^ +\S+(?: \S+)*? {2,}(?=\S)")  # "  name   what it is": a table row
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
TAB = 8


def visible(text: str) -> str:
    """`text` with carriage returns dropped and other control characters shown as symbols."""
    return text.translate(_VISIBLE)


def hanging_indent(line: str) -> int:
    """Columns a wrapped line continues at: under a list item's text, under the second
    column of an indented two-column row, else at the line's indent."""
    row = _DEFINITION.match(line)
    return cell_len(row.group(0)) if row else _lead(line)


def _lead(line: str) -> int:
    """Columns before a line's first word: its indent, and a list item's marker."""
    item = _LIST_ITEM.match(line)
    prefix = item.group(0) if item else line[: len(line) - len(line.lstrip(" \t"))]
    return cell_len(prefix.expandtabs(TAB))


class Wrapper:
    """Wraps text that may arrive in pieces; the output never depends on how it was cut.

    `width` None: no wrapping. `hang`: the continuation indent of every wrapped line
    (default: from each line, see `hanging_indent`). A word is held back until the
    white space after it arrives (or `end`), since it may still grow.
    """

    def __init__(self, width: int | None, *, hang: int | None = None) -> None:
        self._width = width
        self._hang = hang
        self._line = ""  # the logical line so far (its indent and fence are read from it)
        self._column = 0  # cells on the current screen line
        self._wrapped_at: int | None = None  # the indent of a continuation line
        self._spaces = ""  # white space waiting for the next word
        self._word = ""
        self._code = False  # inside a fenced code block: written as it comes

    def feed(self, text: str) -> str:
        out: list[str] = []
        for char in text:
            if char == "\n":
                out.append(self._place_word() + "\n")
                self._end_line()
            elif self._code or self._width is None:
                out.append(char)
                self._line += char
            elif char in " \t":
                out.append(self._place_word())
                self._spaces += char
                self._line += char
            else:
                self._word += char
                self._line += char
        return "".join(out)

    def end(self) -> str:
        """What is still held back (the last word)."""
        return self._place_word()

    def _end_line(self) -> None:
        if _FENCE.match(self._line):
            self._code = not self._code
        self._line, self._column, self._spaces, self._wrapped_at = "", 0, "", None

    def _place_word(self) -> str:
        if not self._word:
            return ""
        word, spaces = self._word, self._spaces.expandtabs(TAB)
        self._word = self._spaces = ""
        assert self._width is not None  # words are held only when wrapping
        needed = cell_len(spaces) + cell_len(word)
        lead = _lead(self._line) if self._wrapped_at is None else self._wrapped_at
        if self._column + needed <= self._width or self._column <= lead:
            self._column += needed  # fits, or nothing but indent precedes it: never split
            return spaces + word
        indent = self._hang if self._hang is not None else hanging_indent(self._line)
        indent = min(indent, self._width // 2)  # leave the text some room
        self._column, self._wrapped_at = indent + cell_len(word), indent
        return "\n" + " " * indent + word


def wrapped(text: str, width: int | None, *, hang: int | None = None) -> str:
    wrapper = Wrapper(width, hang=hang)
    return wrapper.feed(text) + wrapper.end()


def say(
    console: Console, text: str, *, style: str = "", wrap: bool = True, hang: int | None = None
) -> None:
    """Print `text` and a line break: literally, wrapped on a terminal when `wrap`."""
    width = console.width if wrap and console.is_terminal else None
    body = wrapped(visible(text), width, hang=hang)
    console.print(Text(body, style=style), soft_wrap=True, markup=False, emoji=False)
