"""Names resolved the way a file's imports and class bases say, within one repository.

The symbol table keeps, per file, its imports and each class's bases as written
(`bot.symbols.links`). A `Resolver` answers, for one repository and one question:

- which indexed file a module name means (`flask.sansio.scaffold`, `.scaffold`
  from `src/flask/sansio/app.py`), or that it is not indexed (another package);
- what a name used at the top of a file refers to (its own definition, what an
  import binds there, followed through re-exports such as a package's
  `__init__.py`), and what a dotted chain reaches (`werkzeug.utils`, `helpers`);
- a class's bases and method resolution order (C3, as Python computes it; other
  languages' bases are found by name, in the same file, directory, or the one class
  of that name in the repository), with the bases it could not resolve;
- which class in that order defines a member (`Flask.register_error_handler` is
  `Scaffold.register_error_handler`).

Cycles (`class A(B)`, `class B(A)`, or modules re-exporting each other) and
depth are bounded; whatever cannot be resolved is reported as such, never guessed.
Every read is an indexed lookup, cached for the question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from bot.symbols.links import Binding
from bot.symbols.model import FileFacts, SymbolDef

CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "object", "type"})
_MAX_DEPTH = 8  # re-exports followed, or chain segments resolved, before giving up
_MAX_ANCESTORS = 64
_PY = (".py", ".pyi")
_MODULE_FILES = (".py", ".pyi", "/__init__.py", "/__init__.pyi")


class LinkLookup(Protocol):
    """The part of the symbol store resolution reads."""

    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]: ...
    def file_facts(self, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]: ...
    def paths(self, repo: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Target:
    """What a name or chain refers to."""

    kind: Literal["definition", "module", "external", "unknown"]
    definition: SymbolDef | None = None
    path: str = ""  # the module's file, for a module of this repository
    name: str = ""  # the dotted name, for something outside the repository


UNKNOWN = Target("unknown")


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
        self._modules: _ModuleMap | None = None
        self._ancestry: dict[tuple[str, str], Ancestry] = {}

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

    def module_file(self, module: str, importer: str) -> str | None:
        """The indexed file of `module` as written in `importer` (relative or absolute)."""
        if self._modules is None:
            self._modules = _ModuleMap(self._table.paths(self.repo))
        return self._modules.find(module, importer)

    # -- names ----------------------------------------------------------------------------

    def name_in(self, path: str, name: str, depth: int = 0) -> Target:
        """What `name`, used at the top level of `path`, refers to."""
        facts = self.facts(path)
        if facts is None or depth > _MAX_DEPTH:
            return UNKNOWN
        own = [d for d in facts.definitions if d.symbol == name]
        if own:
            return Target("definition", own[0])
        for binding in facts.links.imports:
            if binding.local == name:
                return self._binding(path, binding, depth)
        for binding in facts.links.imports:
            if binding.local == "*":
                module = self.module_file(binding.module, path)
                if module is not None and module != path:
                    found = self.name_in(module, name, depth + 1)
                    if found.kind != "unknown":
                        return found
        return UNKNOWN

    def _binding(self, path: str, b: Binding, depth: int) -> Target:
        if not b.name:  # `import a.b as c` binds module a.b; `import a.b` binds a
            module = self.module_file(b.module, path)
            return Target("module", path=module) if module else Target("external", name=b.module)
        submodule = self.module_file(_join(b.module, b.name), path)
        if submodule is not None:  # `from . import helpers`
            return Target("module", path=submodule)
        module = self.module_file(b.module, path)
        if module is None:
            if _relative(b.module):
                return UNKNOWN  # a relative module the index lacks: not another package's
            return Target("external", name=_join(b.module, b.name))
        return self.name_in(module, b.name, depth + 1)

    def chain(self, path: str, chain: str) -> Target:
        """What a dotted chain written in `path` reaches (`werkzeug.utils`, `helpers`)."""
        root, *rest = chain.split(".")
        target = self.name_in(path, root)
        for depth, part in enumerate(rest):
            if depth > _MAX_DEPTH:
                return UNKNOWN
            target = self.attribute(target, part)
        return target

    def attribute(self, target: Target, name: str) -> Target:
        """`name` looked up on what `target` is: a module's name, a class's member."""
        if target.kind == "external":
            return Target("external", name=_join(target.name, name))
        if target.kind == "module":
            sub = self.module_file(f".{name}", target.path) if _is_init(target.path) else None
            if sub is not None:  # a package's submodule
                return Target("module", path=sub)
            return self.name_in(target.path, name)
        d = target.definition
        if target.kind == "definition" and d is not None and d.kind in CLASS_KINDS:
            member, _ = self.member(d, name)
            return Target("definition", member) if member is not None else UNKNOWN
        return UNKNOWN

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
        merged = _c3([cls], [*orders, bases]) or _depth_first(cls, orders)
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
        if not _is_python(cls.path):
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
        found = self._table.definitions(name, repos=frozenset({self.repo}), limit=50)
        return [d for d in found if d.name == name and d.kind in CLASS_KINDS]

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
        facts = self.facts(cls.path)
        symbol = f"{cls.symbol}.{name}"
        return next((d for d in (facts.definitions if facts else ()) if d.symbol == symbol), None)


def _c3(head: list[SymbolDef], orders: list[list[SymbolDef]]) -> list[SymbolDef] | None:
    """C3 linearization: `head` then the merge of `orders`; None when inconsistent."""
    pending = [list(o) for o in orders if o]
    out = list(head)
    while pending:
        for order in pending:
            candidate = order[0]
            if not any(candidate in other[1:] for other in pending):
                break
        else:
            return None
        if candidate not in out:  # a cycle can bring a class back: once is enough
            out.append(candidate)
        pending = [[c for c in o if c != candidate] for o in pending]
        pending = [o for o in pending if o]
    return out


def _depth_first(cls: SymbolDef, orders: list[list[SymbolDef]]) -> list[SymbolDef]:
    out = [cls]
    for order in orders:
        out += [c for c in order if c not in out]
    return out


def _is_python(path: str) -> bool:
    return path.endswith(_PY)


def _relative(module: str) -> bool:
    return module.startswith(".")


def _join(module: str, name: str) -> str:
    return f"{module}{name}" if module.endswith(".") else f"{module}.{name}"


class _ModuleMap:
    """Module names -> indexed files. An absolute name matches a file whose path ends with
    it, below a directory that is not itself a package (a source root: the repository,
    `src/`, a script's directory); the shortest such path wins, code before tests.
    String operations only: this is built once a question, over every path."""

    def __init__(self, paths: Iterable[str]) -> None:
        files = [p for p in paths if p.endswith(_PY)]
        self._files = frozenset(files)
        packages = {p.rpartition("/")[0] for p in files if _is_init(p)}
        self._by_suffix: dict[str, list[str]] = {}
        for path in sorted(files, key=lambda p: (p.count("/"), "test" in p, p)):
            parts = path.rpartition(".")[0].split("/")
            if parts[-1] == "__init__":
                parts.pop()
            for start in range(len(parts)):
                if start and "/".join(parts[:start]) in packages:
                    continue  # inside a package: not where an absolute import starts
                self._by_suffix.setdefault(".".join(parts[start:]), []).append(path)

    def find(self, module: str, importer: str) -> str | None:
        if not module.startswith("."):
            found = self._by_suffix.get(module)
            return found[0] if found else None
        level = len(module) - len(module.lstrip("."))
        base = importer.rpartition("/")[0]
        for _ in range(level - 1):
            base = base.rpartition("/")[0]
        rest = module[level:].replace(".", "/")
        stem = "/".join(p for p in (base, rest) if p)
        for ending in _MODULE_FILES:
            name = f"{stem}{ending}".lstrip("/")
            if name in self._files:
                return name
        return None


def _is_init(path: str) -> bool:
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")
