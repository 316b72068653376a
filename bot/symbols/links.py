"""What a file says about where its names come from: imports, bases, receivers, types.

The parse that records definitions and references (`bot.symbols.extract`) also
keeps, per file:

- `imports`: each name an import statement binds (`Binding`), as written
  (`from .scaffold import Scaffold`, `import x.y as z`, `const other = require('./other')`,
  `import {a as b} from './m'`, Go's `chi "github.com/go-chi/chi/v5"`, Rust's
  `use crate::de::Deserializer`, Java's `import com.google.gson.Gson`);
- `bases`: each class's bases as written, dotted (`App`, `sansio.Scaffold`,
  `t.Generic`), for every language whose query captures them (`@base`);
- `quals`: the receiver of each call on a name that an import or a top-level
  definition of the file binds (`werkzeug.utils.send_file(...)` -> `werkzeug.utils`),
  or on a builtin (`JSON.stringify(...)` -> `JSON`, `", ".join(...)` -> `str`), so a
  lookup can tell another module's `send_file` from ours;
- `typed`: the receiver of each call on a variable whose type the code states (a Go
  receiver `c *Context`, a typed parameter or local, `x := NewMux()`, `self.x` after
  `self.x = Cls()`), with that type as a small expression (see `TypeExpr`);
- `fields`: each class's fields whose type is stated (`tree *node` in a Go struct,
  `self.x = Cls()`, `private x: Foo`), `results`: each function's stated result type,
  `lists`: top-level constants holding a list of names (`requestMethods = ['get', ...]`)
  `exported`: a Python module's `__all__`, and `package`: a Go file's package name.

And per reference site, how it was written (`forms`, a bitmask): a bare name
(`send(...)`), a member of `self`/`cls`/`this`, of `super()`, of such a bound name, of
a variable of a stated type, of a builtin, or of another object (an expression). A file
read by an older extractor, or in a language without receivers, has no forms (0:
unknown, matched by name).

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
OTHER = 16  # `session.send(...)`, `f().send(...)`: an object of a type the code does not state
TYPED = 32  # `c.send(...)` where `c *Client`, `self.client.send(...)`: the type is in `typed`
BUILTIN = 64  # `JSON.stringify(...)`, `", ".join(...)`, `strings.Join(...)`: in `quals`

FORM_BITS = (0, BARE, SELF, SUPER, QUALIFIED, OTHER, TYPED, BUILTIN)  # form index -> its bit


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
    typed: tuple[tuple[int, str, str, str], ...] = ()  # (line, called name, receiver, type)
    fields: tuple[tuple[str, str, str], ...] = ()  # (class symbol, field, type)
    results: tuple[tuple[str, str], ...] = ()  # (function symbol, type it returns)
    lists: tuple[tuple[str, int, tuple[str, ...]], ...] = ()  # (constant, line, its names)
    exported: tuple[str, ...] | None = None  # a Python module's `__all__`; None: it has none
    package: str = ""  # a Go file's package name

    def __bool__(self) -> bool:
        return bool(
            self.imports
            or self.bases
            or self.quals
            or self.typed
            or self.fields
            or self.results
            or self.lists
            or self.exported is not None
            or bool(self.package)
        )

    def to_text(self) -> str:
        """One fact a line, fields tab-separated (names never hold tabs or line breaks)."""
        lines = [f"i\t{b.local}\t{b.module}\t{b.name}" for b in self.imports]
        lines += [f"b\t{symbol}\t{' '.join(bases)}" for symbol, bases in self.bases]
        lines += [f"q\t{line}\t{name}\t{chain}" for line, name, chain in self.quals]
        lines += [f"t\t{line}\t{name}\t{via}\t{kind}" for line, name, via, kind in self.typed]
        lines += [f"f\t{owner}\t{name}\t{kind}" for owner, name, kind in self.fields]
        lines += [f"r\t{symbol}\t{kind}" for symbol, kind in self.results]
        lines += [f"l\t{name}\t{line}\t{' '.join(names)}" for name, line, names in self.lists]
        if self.exported is not None:
            lines.append(f"a\t{' '.join(self.exported)}")
        if self.package:
            lines.append(f"p\t{self.package}")
        return "\n".join(lines)

    @classmethod
    def from_text(cls, text: str) -> FileLinks:
        """What `to_text` wrote; lines that do not parse are skipped."""
        found: dict[str, list[list[str]]] = {}
        for line in text.split("\n"):
            kind, _, rest = line.partition("\t")
            fields = rest.split("\t")
            numbered = kind not in ("q", "t", "l") or fields[kind == "l"].isdigit()
            if len(fields) == _FIELDS.get(kind, -1) and numbered:
                found.setdefault(kind, []).append(fields)
        exported = found.get("a")
        return cls(
            tuple(Binding(*f) for f in found.get("i", ())),
            tuple((f[0], tuple(f[1].split())) for f in found.get("b", ())),
            tuple((int(f[0]), f[1], f[2]) for f in found.get("q", ())),
            tuple((int(f[0]), f[1], f[2], f[3]) for f in found.get("t", ())),
            tuple((f[0], f[1], f[2]) for f in found.get("f", ())),
            tuple((f[0], f[1]) for f in found.get("r", ())),
            tuple((f[0], int(f[1]), tuple(f[2].split())) for f in found.get("l", ())),
            tuple(exported[-1][0].split()) if exported else None,
            found["p"][-1][0] if "p" in found else "",
        )

    def bases_of(self, symbol: str) -> tuple[str, ...] | None:
        """The bases written for class `symbol`; None when it names none."""
        return next((b for s, b in self.bases if s == symbol), None)

    def receivers(self, line: int, name: str) -> list[str]:
        return [chain for at, called, chain in self.quals if at == line and called == name]

    def types(self, line: int, name: str) -> list[tuple[str, str]]:
        """(receiver as written, its type) of each call of `name` on a typed variable there."""
        return [
            (via, kind) for at, called, via, kind in self.typed if at == line and called == name
        ]

    def field_type(self, owner: str, name: str) -> str:
        return next((kind for o, n, kind in self.fields if o == owner and n == name), "")

    def result_of(self, symbol: str) -> str:
        return next((kind for s, kind in self.results if s == symbol), "")

    def names_in(self, constant: str) -> tuple[int, tuple[str, ...]] | None:
        """(line, names) of a top-level constant listing names; None if there is none."""
        return next(((line, names) for n, line, names in self.lists if n == constant), None)


_FIELDS = {"i": 3, "b": 2, "q": 3, "t": 4, "f": 3, "r": 2, "l": 3, "a": 1, "p": 1}  # per kind

NO_LINKS = FileLinks()


_DOTTED = re.compile(r"(?:[^\W\d]|\$)[\w$]*(?:\.(?:[^\W\d]|\$)[\w$]*)*")
_SEPARATORS = re.compile(r"::|\\|->")


def dotted(raw: str) -> str:
    """A base or receiver as written, as a dotted name ("" when it is not a plain name)."""
    text = _SEPARATORS.sub(".", "".join(raw.split())).strip(".")
    return text if _DOTTED.fullmatch(text) else ""


_VERSION = re.compile(r"^v\d+$")  # a Go module path's major version segment


def go_package(path: str) -> str:
    """The package name an import path binds by default: its last segment, not a version."""
    parts = [p for p in path.split("/") if p]
    while len(parts) > 1 and _VERSION.match(parts[-1]):
        parts.pop()
    return parts[-1].replace("-", "_").replace(".", "_") if parts else ""


FIELD_OF = ">"  # in a stated type: `Mux>tree` is the type of field `tree` of Mux
