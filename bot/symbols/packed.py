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
  forms    one byte a site, aligned with sites: how it was written (`links` bits: a
           bare name, a member of `self`, of an imported name...); empty when the
           language records none (every site then matches by name alone).
  links    the file's imports, class bases, receivers and stated types
           (`links.FileLinks`, as text).
  aliases  the names it binds other than by a definition (`model.Alias`), as tuples.

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

from bot.symbols.links import FileLinks
from bot.symbols.model import Alias, Definition, FileSymbols, Reference

DefRow = tuple[str, str, str, int, int]  # name, symbol, kind, start_line, end_line
# name, kind, target, module, owner, start_line, end_line (`model.Alias`)
AliasRow = tuple[str, str, str, str, str, int, int]

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
    forms: bytes = b""
    links: str = ""
    aliases: tuple[AliasRow, ...] = ()

    @classmethod
    def from_sites(
        cls,
        defs: Sequence[DefRow],
        sites: Mapping[str, Sequence[int]],
        *,
        distinct: bool = False,
        forms: Mapping[str, bytes] | None = None,
        links: FileLinks | None = None,
        aliases: Sequence[AliasRow] = (),
    ) -> PackedSymbols:
        """From name -> site codes; `distinct`: each list is already ascending without
        repeats (otherwise they are sorted and repeats dropped here). `forms`: name -> one
        byte a site, for distinct codes only."""
        names = sorted(sites)
        offsets = [0]
        flat: list[int] = []
        for name in names:
            codes = sites[name]
            flat.extend(codes if distinct else sorted(set(codes)))
            offsets.append(len(flat))
        text = f" {' '.join(names)} " if names else " "
        packed_forms = b"".join(forms[n] for n in names) if forms else b""
        link_text = links.to_text() if links else ""
        return cls(
            tuple(defs),
            text,
            to_u32(offsets),
            to_u32(flat),
            packed_forms,
            link_text,
            tuple(aliases),
        )

    @classmethod
    def from_file_symbols(cls, symbols: FileSymbols) -> PackedSymbols:
        merged: dict[str, dict[int, int]] = {}  # name -> code -> forms
        for ref in symbols.references:
            if len(ref.name.split()) == 1:  # names are space-separated when packed
                codes = merged.setdefault(ref.name, {})
                code = encode(ref.line, ref.call)
                codes[code] = codes.get(code, 0) | ref.form
        rows = [(d.name, d.symbol, d.kind, d.start_line, d.end_line) for d in symbols.definitions]
        sites = {name: sorted(codes) for name, codes in merged.items()}
        with_forms = any(ref.form for ref in symbols.references)
        forms = (
            {name: bytes(merged[name][c] for c in codes) for name, codes in sites.items()}
            if with_forms
            else None
        )
        aliases = [
            (a.name, a.kind, a.target, a.module, a.owner, a.start_line, a.end_line)
            for a in symbols.aliases
        ]
        return cls.from_sites(
            rows, sites, distinct=True, forms=forms, links=symbols.links, aliases=aliases
        )

    @property
    def definitions(self) -> tuple[Definition, ...]:
        return tuple(Definition(*row) for row in self.defs)

    def name_list(self) -> list[str]:
        return self.names.split()

    @property
    def reference_count(self) -> int:
        """How many references (distinct name, line, call)."""
        return len(self.sites) // 4

    @property
    def file_links(self) -> FileLinks:
        return FileLinks.from_text(self.links)

    def to_file_symbols(self) -> FileSymbols:
        definitions = self.definitions
        callers = CallerMap(definitions)
        offsets, sites = from_u32(self.offsets), from_u32(self.sites)
        forms = self.forms
        refs = [
            Reference(
                name,
                code >> 1,
                callers.caller(code >> 1),
                bool(code & 1),
                forms[at] if at < len(forms) else 0,
            )
            for i, name in enumerate(self.name_list())
            for at, code in enumerate(sites[offsets[i] : offsets[i + 1]], start=offsets[i])
        ]
        refs.sort(key=lambda r: (r.line, r.name, r.call))
        aliases = tuple(Alias(*row) for row in self.aliases)
        return FileSymbols(definitions, tuple(refs), self.file_links, aliases)


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


def site_forms(offsets: bytes, forms: bytes, index: int) -> bytes:
    """The forms of the name at `index`'s sites (empty when the file has none)."""
    if not forms:
        return b""
    bounds = from_u32(offsets[4 * index : 4 * index + 8])
    return forms[bounds[0] : bounds[1]]


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
