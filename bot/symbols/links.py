"""What a file says about where its names come from: imports, class bases, call receivers.

The parse that records definitions and references (`bot.symbols.extract`) also
keeps, per file:

- `imports`: each name an import statement binds (`Binding`), as written
  (`from .scaffold import Scaffold`, `import werkzeug.utils`, `import x.y as z`);
  Python only (other languages' imports name files or packages the table does not
  map to modules);
- `bases`: each class's bases as written, dotted (`App`, `sansio.Scaffold`,
  `t.Generic`), for every language whose query captures them (`@base`);
- `quals`: the receiver of each call on a name that an import or a top-level
  definition of the file binds (`werkzeug.utils.send_file(...)` -> `werkzeug.utils`),
  so a lookup can tell another module's `send_file` from ours.

And per reference site, how it was written (`forms`, a bitmask): a bare name
(`send(...)`), a member of `self`/`cls`, of `super()`, of such a bound name, or of
another object (an instance, an expression). A file read by an older extractor,
or in a language without receivers, has no forms (0: unknown, matched by name).

All of it is resolved when a question is asked (`bot.retrieval.symbol_links`),
against the repository as indexed then; nothing here knows other files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# How a reference was written (bits of a site's form; 0 = not recorded).
BARE = 1  # `send(...)`
SELF = 2  # `self.send(...)`, `cls.send(...)`
SUPER = 4  # `super().send(...)`
QUALIFIED = 8  # `helpers.send(...)`, `werkzeug.utils.send(...)`: the receiver is in `quals`
OTHER = 16  # `session.send(...)`, `self.adapter.send(...)`, `f().send(...)`

FORM_BITS = (0, BARE, SELF, SUPER, QUALIFIED, OTHER)  # a mark's form index -> its bit


@dataclass(frozen=True, slots=True)
class Binding:
    """One name an import binds in a file."""

    local: str  # the name bound ("z" for `import x.y as z`, "*" for a star import)
    module: str  # as written, dots for relative imports: "werkzeug.utils", ".scaffold", ".."
    name: str = ""  # the name imported from the module; "" when the module itself is bound


@dataclass(frozen=True, slots=True)
class FileLinks:
    imports: tuple[Binding, ...] = ()
    bases: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (class symbol, bases as written)
    quals: tuple[tuple[int, str, str], ...] = ()  # (line, called name, receiver as written)

    def __bool__(self) -> bool:
        return bool(self.imports or self.bases or self.quals)

    def to_text(self) -> str:
        """One fact a line, fields tab-separated (names never hold tabs or line breaks)."""
        lines = [f"i\t{b.local}\t{b.module}\t{b.name}" for b in self.imports]
        lines += [f"b\t{symbol}\t{' '.join(bases)}" for symbol, bases in self.bases]
        lines += [f"q\t{line}\t{name}\t{chain}" for line, name, chain in self.quals]
        return "\n".join(lines)

    @classmethod
    def from_text(cls, text: str) -> FileLinks:
        """What `to_text` wrote; lines that do not parse are skipped."""
        imports: list[Binding] = []
        bases: list[tuple[str, tuple[str, ...]]] = []
        quals: list[tuple[int, str, str]] = []
        for line in text.split("\n"):
            kind, _, rest = line.partition("\t")
            fields = rest.split("\t")
            if kind == "i" and len(fields) == 3:
                imports.append(Binding(*fields))
            elif kind == "b" and len(fields) == 2:
                bases.append((fields[0], tuple(fields[1].split())))
            elif kind == "q" and len(fields) == 3 and fields[0].isdigit():
                quals.append((int(fields[0]), fields[1], fields[2]))
        return cls(tuple(imports), tuple(bases), tuple(quals))

    def bases_of(self, symbol: str) -> tuple[str, ...] | None:
        """The bases written for class `symbol`; None when it names none."""
        return next((b for s, b in self.bases if s == symbol), None)

    def receivers(self, line: int, name: str) -> list[str]:
        return [chain for at, called, chain in self.quals if at == line and called == name]


NO_LINKS = FileLinks()


_DOTTED = re.compile(r"(?:[^\W\d]|\$)[\w$]*(?:\.(?:[^\W\d]|\$)[\w$]*)*")
_SEPARATORS = re.compile(r"::|\\|->")


def dotted(raw: str) -> str:
    """A base or receiver as written, as a dotted name ("" when it is not a plain name)."""
    text = _SEPARATORS.sub(".", "".join(raw.split())).strip(".")
    return text if _DOTTED.fullmatch(text) else ""
