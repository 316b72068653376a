"""Names resolved the way a file's imports, aliases and class bases say, in one repository.

The symbol table keeps, per file, its imports, aliases (re-exports, `exports.x = ...`,
`pub use`), stated types and each class's bases as written (`bot.symbols.links`,
`bot.symbols.model.Alias`). A `Resolver` answers, for one repository and one question:

- which indexed file or package directory a module name means (`symbol_modules`:
  `flask.sansio.scaffold`, `./other`, `github.com/go-chi/chi/v5/middleware`,
  `crate::de`), or that it is not indexed (another package);
- what a name used at the top of a file refers to (its own definition, an alias, what
  an import binds there, followed through re-exports such as a package's `__init__.py`
  or `export * from`, a definition of the same Go or Java package), and what a dotted
  chain reaches (`werkzeug.utils`, `helpers`, `crate::de`);
- a class's bases and method resolution order (C3, as Python computes it; other
  languages' bases are found by name, in the same file, directory, or the one class
  of that name in the repository), with the bases it could not resolve;
- which class in that order defines a member (`Flask.register_error_handler` is
  `Scaffold.register_error_handler`; a Go method may be in any file of its package, a
  Rust one in any `impl` of the crate).

Cycles (`class A(B)`, `class B(A)`, or modules re-exporting each other) and
depth are bounded; whatever cannot be resolved is reported as such, never guessed.
Every read is an indexed lookup, cached for the question.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.retrieval.symbol_language import language_of
from bot.retrieval.symbol_modules import PACKAGE, Modules, is_init, package_dir
from bot.retrieval.symbol_mro import c3, depth_first
from bot.retrieval.symbol_target import CLASS_KINDS, UNKNOWN, LinkLookup, Target
from bot.symbols.builtins import GLOBAL_OBJECTS
from bot.symbols.links import Binding, go_package
from bot.symbols.model import ALIAS, ASSIGNED, EVERY_NAME, FileFacts, SymbolAlias, SymbolDef

_MAX_DEPTH = 8  # re-exports followed, or chain segments resolved, before giving up
_MAX_ANCESTORS = 64
_PY = (".py", ".pyi")
_EXPORTED = ("", "module.exports")  # the owners of a module's own aliases
# Languages whose methods may be defined outside their type's file, and where.
_DETACHED = {"go": "package", "rust": "crate", "cpp": "crate", "c": "crate", "csharp": "crate"}
_SAME_PACKAGE = frozenset({"go", "java"})  # a name of the package needs no import
_PATH_ROOTS = frozenset({"crate", "self", "super"})  # Rust paths that name a module


@dataclass(slots=True)
class Ancestry:
    """A class's method resolution order (itself first) and the bases not resolved."""

    order: list[SymbolDef]
    unresolved: list[str] = field(default_factory=list)  # bases as written


class Resolver:
    def __init__(self, table: LinkLookup, repo: str) -> None:
        self._table = table
        self.repo = repo
        self._facts: dict[str, FileFacts | None] = {}
        self._modules: Modules | None = None
        self._ancestry: dict[tuple[str, str], Ancestry] = {}
        self._named: dict[str, list[SymbolDef]] = {}

    # -- files and modules --------------------------------------------------------------

    def preload(self, paths: Iterable[str]) -> None:
        missing = [p for p in set(paths) if p not in self._facts]
        if missing:
            found = self._table.file_facts(self.repo, missing)
            for path in missing:
                self._facts[path] = found.get(path)

    def facts(self, path: str) -> FileFacts | None:
        self.preload([path])
        return self._facts[path]

    @property
    def modules(self) -> Modules:
        if self._modules is None:
            self._modules = Modules(self._table.paths(self.repo), self.repo)
        return self._modules

    def module_file(self, module: str, importer: str) -> str | None:
        """The indexed file (or package directory + "/") of `module` as written in
        `importer`, relative or absolute."""
        found = self.modules.find(module, importer)
        if found is None and language_of(importer) == "go":
            return self._go_root(module)
        return found

    def _go_root(self, module: str) -> str | None:
        """The repository's root package, when `module` is its import path."""
        root = self.modules.root_package()
        facts = self.facts(root) if root is not None else None
        package = facts.links.package if facts is not None else ""
        return PACKAGE if package and package == go_package(module) else None

    def defined(self, name: str) -> list[SymbolDef]:
        """Every definition of the repository whose name is `name` (cached)."""
        if name not in self._named:
            found = self._table.definitions(name, repos=frozenset({self.repo}), limit=200)
            self._named[name] = [d for d in found if d.name == name]
        return self._named[name]

    # -- names ----------------------------------------------------------------------------

    def name_in(self, path: str, name: str, depth: int = 0, *, aliases: bool = True) -> Target:
        """What `name`, used at the top level of `path` (a file or a package), refers to."""
        directory = package_dir(path)
        if directory is not None:
            return self._in_package(directory, name)
        facts = self.facts(path)
        if facts is None or depth > _MAX_DEPTH:
            return UNKNOWN
        own = [d for d in facts.definitions if d.symbol == name]
        if own:
            return Target("definition", _best(own))
        bound = (
            [a for a in facts.aliases if a.name == name and a.owner in _EXPORTED] if aliases else []
        )
        alias = next((a for a in bound if a.kind == ALIAS), None)
        if alias is not None:
            return self._alias(path, alias, depth)
        value = next((a for a in bound if a.kind == ASSIGNED), None)
        if value is not None:
            return Target("value", via=(value,))
        for binding in facts.links.imports:
            if binding.local == name:
                return self._binding(path, binding, depth)
        found = self._through_stars(path, facts, name, depth)
        if found.kind != "unknown":
            return found
        if language_of(path) in _SAME_PACKAGE:
            return self._in_package(posixpath.dirname(path), name, besides=path)
        return UNKNOWN

    def _through_stars(self, path: str, facts: FileFacts, name: str, depth: int) -> Target:
        """`name` from what the file imports or re-exports every name of."""
        modules = [b.module for b in facts.links.imports if b.local == "*"]
        modules += [a.module for a in facts.aliases if a.name == EVERY_NAME and a.kind == ALIAS]
        for module_name in modules:
            module = self.module_file(module_name, path) if module_name else None
            if module is None or module == path or not self._exports(module, name):
                continue
            found = self.name_in(module, name, depth + 1)
            if found.kind != "unknown":
                return found
        return UNKNOWN

    def _exports(self, module: str, name: str) -> bool:
        """Whether a star import of `module` gets `name` (a Python `__all__` may say no)."""
        facts = self.facts(module) if package_dir(module) is None else None
        exported = facts.links.exported if facts is not None else None
        return exported is None or name in exported

    def _in_package(self, directory: str, name: str, *, besides: str = "") -> Target:
        """A top-level definition `name` in a package directory (Go, Java)."""
        found = [
            d
            for d in self.defined(name)
            if posixpath.dirname(d.path) == directory and d.symbol == name and d.path != besides
        ]
        return Target("definition", _best(found)) if found else UNKNOWN

    def _alias(self, path: str, alias: SymbolAlias, depth: int) -> Target:
        """What an alias of `path` names: its target in its module, or in the same file."""
        if alias.module:
            module = self.module_file(alias.module, path)
            if module is None:
                if alias.module.startswith("."):
                    return UNKNOWN  # a relative module the index lacks
                return Target("external", name=_join(alias.module, alias.target), via=(alias,))
            if alias.target in ("", EVERY_NAME):
                return Target("module", path=module, via=(alias,))
            found = self.name_in(module, alias.target, depth + 1)
        else:
            found = self.chain(path, alias.target, depth + 1, skip=alias.name)
        if found.kind == "unknown":
            return found
        return Target(found.kind, found.definition, found.path, found.name, (alias, *found.via))

    def _binding(self, path: str, b: Binding, depth: int) -> Target:
        if not b.name:  # `import a.b as c` binds module a.b; `import a.b` binds a
            module = self.module_file(b.module, path)
            if module:
                return Target("module", path=module)
            if b.module.startswith("."):
                return UNKNOWN
            return Target("external", name=b.module)
        submodule = self.module_file(_join(b.module, b.name), path)
        if submodule is not None:  # `from . import helpers`
            return Target("module", path=submodule)
        module = self.module_file(b.module, path)
        if module is None:
            if _relative(b.module):
                return UNKNOWN  # a relative module the index lacks: not another package's
            return Target("external", name=_join(b.module, b.name))
        return self.name_in(module, b.name, depth + 1)

    def chain(self, path: str, chain: str, depth: int = 0, *, skip: str = "") -> Target:
        """What a dotted chain written in `path` reaches (`werkzeug.utils`, `helpers`);
        `skip`: an alias being followed, which its own target does not mean again."""
        root, *rest = chain.split(".")
        if root in _PATH_ROOTS and language_of(path) == "rust":
            module = self.module_file("::".join([root, *rest]), path)
            return Target("module", path=module) if module else UNKNOWN
        target = self.name_in(path, root, depth, aliases=root != skip)
        if target.kind == "unknown" and root in GLOBAL_OBJECTS.get(language_of(path), ()):
            return Target("external", name=chain)  # `JSON.parse`, `std::mem`: the language's
        for part in rest[: _MAX_DEPTH - depth]:
            target = self.attribute(target, part)
        if len(rest) > _MAX_DEPTH - depth:
            return UNKNOWN
        return target

    def attribute(self, target: Target, name: str) -> Target:
        """`name` looked up on what `target` is: a module's name, a class's member."""
        if target.kind == "external":
            return Target("external", name=_join(target.name, name))
        if target.kind == "module":
            sub = self.module_file(f".{name}", target.path) if is_init(target.path) else None
            if sub is not None:  # a package's submodule
                return Target("module", path=sub)
            found = self.name_in(target.path, name)
            if found.kind == "unknown":  # `module.exports = X`: a member of X
                found = self._default_member(target.path, name)
            return found
        d = target.definition
        if target.kind == "definition" and d is not None and d.kind in CLASS_KINDS:
            member, _ = self.member(d, name)
            return Target("definition", member) if member is not None else UNKNOWN
        return UNKNOWN

    def _default_member(self, path: str, name: str) -> Target:
        facts = self.facts(path) if package_dir(path) is None else None
        default = next(
            (a for a in (facts.aliases if facts else ()) if a.name == "default" and _is_export(a)),
            None,
        )
        if default is None:
            return UNKNOWN
        owner = self._alias(path, default, 1)
        return self.attribute(owner, name) if owner.kind == "definition" else UNKNOWN

    # -- classes ----------------------------------------------------------------------------

    def ancestry(self, cls: SymbolDef) -> Ancestry:
        """`cls`'s method resolution order and the bases that could not be resolved."""
        key = (cls.path, cls.symbol)
        if key not in self._ancestry:
            self._ancestry[key] = Ancestry([cls])  # a cycle back to here stops at itself
            self._ancestry[key] = self._linearize(cls)
        return self._ancestry[key]

    def _linearize(self, cls: SymbolDef) -> Ancestry:
        bases, unresolved = self.bases(cls)
        orders = []
        for base in bases:
            found = self.ancestry(base)
            orders.append(found.order)
            unresolved += [u for u in found.unresolved if u not in unresolved]
        merged = c3([cls], [*orders, bases]) or depth_first(cls, orders)
        return Ancestry(merged[:_MAX_ANCESTORS], unresolved)

    def bases(self, cls: SymbolDef) -> tuple[list[SymbolDef], list[str]]:
        """The resolved base classes of `cls`, and the bases (as written) not resolved."""
        facts = self.facts(cls.path)
        written = facts.links.bases_of(cls.symbol) if facts is not None else None
        resolved: list[SymbolDef] = []
        missing: list[str] = []
        for base in written or ():
            found = self._base(cls, base)
            if found is None or found == cls:
                missing.append(base)
            elif found not in resolved:
                resolved.append(found)
        return resolved, missing

    def _base(self, cls: SymbolDef, base: str) -> SymbolDef | None:
        if not _is_python(cls.path):  # what the imports say, else by name
            found = self.chain(cls.path, base).definition
            if found is not None and found.kind in CLASS_KINDS and found != cls:
                return found
            return self._by_name(cls, base)
        target = self.chain(cls.path, base)
        d = target.definition
        if d is not None:
            return d if d.kind in CLASS_KINDS else None
        # Unbound: a class nested beside it (`class B(A)` in the same class body), or none.
        return self._sibling(cls, base) if target.kind == "unknown" else None

    def _sibling(self, cls: SymbolDef, base: str) -> SymbolDef | None:
        """A class of the same file named `base` (a nested class's sibling)."""
        facts = self.facts(cls.path)
        last = base.rpartition(".")[2]
        defs = facts.definitions if facts is not None else ()
        classes = [d for d in defs if d.name == last and d != cls and d.kind in CLASS_KINDS]
        return classes[0] if len(classes) == 1 else None

    def _by_name(self, cls: SymbolDef, base: str) -> SymbolDef | None:
        """Languages without imports here: the same file, else the same directory, else
        the one class of that name in the repository."""
        sibling = self._sibling(cls, base)
        if sibling is not None:
            return sibling
        last = base.rpartition(".")[2]
        found = [d for d in self.named_classes(last) if d != cls]
        folder = cls.path.rpartition("/")[0]
        here = [d for d in found if d.path.rpartition("/")[0] == folder]
        pick = here or found
        return pick[0] if len(pick) == 1 else None

    def named_classes(self, name: str) -> list[SymbolDef]:
        return [d for d in self.defined(name) if d.kind in CLASS_KINDS]

    def class_of(self, d: SymbolDef) -> SymbolDef | None:
        """The class `d` is, or the one a Rust `impl` or C++ method block is for."""
        if d.kind in CLASS_KINDS:
            return d
        if d.kind != "impl":
            return None
        here = posixpath.dirname(d.path)
        found = [c for c in self.named_classes(d.name) if c.symbol == d.symbol]
        near = [c for c in found if c.path == d.path] or [
            c for c in found if posixpath.dirname(c.path) == here
        ]
        pick = near or found
        return pick[0] if len(pick) == 1 else None

    def member(self, cls: SymbolDef, name: str) -> tuple[SymbolDef | None, list[SymbolDef]]:
        """The definition of `name` that `cls` gets (its own or the first ancestor's), and
        the classes from `cls` to the one defining it."""
        order = self.ancestry(cls).order
        for i, owner in enumerate(order):
            found = self.own_member(owner, name)
            if found is not None:
                return found, order[: i + 1]
        return None, []

    def own_member(self, cls: SymbolDef, name: str) -> SymbolDef | None:
        """`cls`'s own `name`: in its file, or (Go, Rust, C++, C#) wherever its language
        lets a method of it be written: the same package, any `impl` of the crate."""
        facts = self.facts(cls.path)
        symbol = f"{cls.symbol}.{name}"
        here = next((d for d in (facts.definitions if facts else ()) if d.symbol == symbol), None)
        where = _DETACHED.get(language_of(cls.path))
        if here is not None or where is None:
            return here
        found = [d for d in self.defined(name) if d.symbol == symbol and d.kind != "impl"]
        folder = posixpath.dirname(cls.path)
        same = [d for d in found if posixpath.dirname(d.path) == folder]
        if where == "package":
            found = same
        pick = same or found
        return pick[0] if len(pick) == 1 else None


def _is_python(path: str) -> bool:
    return path.endswith(_PY)


def _relative(module: str) -> bool:
    return module.startswith(".")


def _join(module: str, name: str) -> str:
    return f"{module}{name}" if module.endswith(".") else f"{module}.{name}"


def _is_export(a: SymbolAlias) -> bool:
    """An alias a module exports under its name (not a member set on some object)."""
    return a.kind == ALIAS and a.owner in _EXPORTED


def _best(defs: list[SymbolDef]) -> SymbolDef:
    """Of several definitions with one symbol, a class or function before an `impl`."""
    return min(defs, key=lambda d: (d.kind == "impl", d.kind not in CLASS_KINDS, d.start_line))
