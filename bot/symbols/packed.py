"""One file's symbols in compact form: what ingest holds and the store keeps per file.

A `Reference` object costs about 100 bytes and the standard library has over a
million references, so references travel packed instead:

  names    " a b c ": the distinct referenced names, sorted, space-separated, with a
           space at each end (names never contain spaces). The store indexes this
           text for full-text lookup, and `find` locates a name in it at C speed.
  offsets  u32 little-endian, one more than there are names: the sites of name i
           are sites[offsets[i]:offsets[i + 1]].
  sites    u32 little-endian codes `line << 1 | call`, ascending for each name, so a
           (name, line, call) triple is kept once.

Definitions travel as plain tuples (`DefRow`): a tuple of strings and ints is
smaller than an object and the garbage collector stops tracking it, which
matters when a repository has a hundred thousand of them.

A reference's caller is not stored: it is the innermost definition holding its
line (`CallerMap`), found from the file's definitions when it is needed.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.symbols.model import Definition, FileSymbols, Reference

DefRow = tuple[str, str, str, int, int]  # name, symbol, kind, start_line, end_line

_U32 = "I" if array("I").itemsize == 4 else "L"
_SWAP = sys.byteorder == "big"


def to_u32(values: Iterable[int]) -> bytes:
    data = array(_U32, values)
    if _SWAP:
        data.byteswap()
    return data.tobytes()


def from_u32(data: bytes) -> array[int]:
    out = array(_U32)
    out.frombytes(data)
    if _SWAP:
        out.byteswap()
    return out


@dataclass(frozen=True, slots=True)
class PackedSymbols:
    """A file's definitions and its references in the packed form described above."""

    defs: tuple[DefRow, ...] = ()
    names: str = " "
    offsets: bytes = b""
    sites: bytes = b""

    @classmethod
    def from_sites(
        cls,
        defs: Sequence[DefRow],
        sites: Mapping[str, Sequence[int]],
        *,
        distinct: bool = False,
    ) -> PackedSymbols:
        """From name -> site codes; `distinct`: each list is already ascending without
        repeats (otherwise they are sorted and repeats dropped here)."""
        names = sorted(sites)
        offsets = [0]
        flat: list[int] = []
        for name in names:
            codes = sites[name]
            flat.extend(codes if distinct else sorted(set(codes)))
            offsets.append(len(flat))
        text = f" {' '.join(names)} " if names else " "
        return cls(tuple(defs), text, to_u32(offsets), to_u32(flat))

    @classmethod
    def from_file_symbols(cls, symbols: FileSymbols) -> PackedSymbols:
        sites: dict[str, list[int]] = {}
        for ref in symbols.references:
            if len(ref.name.split()) == 1:  # names are space-separated when packed
                sites.setdefault(ref.name, []).append(encode(ref.line, ref.call))
        rows = [(d.name, d.symbol, d.kind, d.start_line, d.end_line) for d in symbols.definitions]
        return cls.from_sites(rows, sites)

    @property
    def definitions(self) -> tuple[Definition, ...]:
        return tuple(Definition(*row) for row in self.defs)

    def name_list(self) -> list[str]:
        return self.names.split()

    @property
    def reference_count(self) -> int:
        """How many references (distinct name, line, call)."""
        return len(self.sites) // 4

    def to_file_symbols(self) -> FileSymbols:
        definitions = self.definitions
        callers = CallerMap(definitions)
        offsets, sites = from_u32(self.offsets), from_u32(self.sites)
        refs = [
            Reference(name, code >> 1, callers.caller(code >> 1), bool(code & 1))
            for i, name in enumerate(self.name_list())
            for code in sites[offsets[i] : offsets[i + 1]]
        ]
        refs.sort(key=lambda r: (r.line, r.name, r.call))
        return FileSymbols(definitions, tuple(refs))


EMPTY = PackedSymbols()


def encode(line: int, call: bool) -> int:
    return line << 1 | call


def name_index(names: str, name: str) -> int:
    """The position of `name` in a packed names text, or -1."""
    at = names.find(f" {name} ")
    return -1 if at < 0 else names.count(" ", 0, at + 1) - 1


def folded_indexes(names: str, name: str) -> list[int]:
    """Positions of the names equal to `name` ignoring case."""
    folded = name.casefold()
    return [i for i, n in enumerate(names.split()) if n.casefold() == folded]


def site_codes(offsets: bytes, sites: bytes, index: int) -> array[int]:
    """The site codes of the name at `index`."""
    bounds = from_u32(offsets[4 * index : 4 * index + 8])
    return from_u32(sites[4 * bounds[0] : 4 * bounds[1]])


def site_count(offsets: bytes, index: int) -> int:
    bounds = from_u32(offsets[4 * index : 4 * index + 8])
    return bounds[1] - bounds[0]


class Scoped(Protocol):
    """A definition's symbol and lines (`Definition` or `SymbolDef`)."""

    @property
    def symbol(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


class CallerMap:
    """The innermost definition holding each line, by painting outer definitions first."""

    __slots__ = ("_owner", "_symbols")

    def __init__(self, definitions: Iterable[Scoped]) -> None:
        ordered = sorted(definitions, key=lambda d: (d.start_line, -d.end_line))
        self._symbols = ["", *(d.symbol for d in ordered)]
        last = max((d.end_line for d in ordered), default=0)
        owner = [0] * (last + 1)
        for number, d in enumerate(ordered, start=1):
            if d.end_line >= d.start_line > 0:
                owner[d.start_line : d.end_line + 1] = [number] * (d.end_line - d.start_line + 1)
        self._owner = owner

    def caller(self, line: int) -> str:
        owner = self._owner
        return self._symbols[owner[line]] if 0 <= line < len(owner) else ""
