"""How a repository is organised: its main parts, what each is for, how they depend, where to start.

"What are the main parts and how do they fit?" wants what a tree of file counts cannot
give. From the index's manifest and chunks and the symbol table:

- parts: the implementation code's directories below the common root, and the root's
  own main files (a Go package's `mux.go`, `tree.go`); a repository that is one big file
  is split into its main classes (`bottle.py`: `Bottle`, `Router`, ...), see `parts`;
- a one-line role for each, from its README, package comment or docstring (`roles`);
- dependencies: part A depends on part B when A's code names what only B defines
  (imports name those things too), counted per name;
- entry points: programs' `main`, console scripts and `package.json` entries, then the
  definitions the rest of the code uses most.

Built once per indexed commit and cached, like the repository map.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.errors import BotError
from bot.index.base import Index
from bot.models import RepoState
from bot.retrieval.architecture_parts import PartPlan, plan_parts
from bot.retrieval.architecture_roles import Role, definition_role, file_role, folder_role
from bot.retrieval.commit_cache import CommitCache
from bot.retrieval.howcalls import implementation
from bot.retrieval.howpath import file_lines
from bot.retrieval.repomap import RankedSymbols
from bot.retrieval.retriever import Source
from bot.retrieval.symbol_facts import SymbolLookup
from bot.symbols.model import SymbolDef

log = logging.getLogger(__name__)

MAX_FILES_READ = 400  # files whose chunks are read for dependencies
LANDMARKS = 3  # most-referenced definitions named per part
MAX_ROLE_FILES = 5  # a folder without docs of its own: files whose docstring may say its role
MAX_ENTRIES = 4
ENTRY_LINES = 30  # lines of an entry point shown to a model
MIN_NAME = 4  # shorter names (`New`, `get`) say too little about a dependency
CACHE_SIZE = 16
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_TOP_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "type", "enum", "function", "constructor"}
)
_CRATE_ROOTS = ("src/lib.rs", "src/main.rs")
_SCRIPT = re.compile(r"^\s*[\"']?([\w.-]+)[\"']?\s*=\s*[\"']([\w.]+):([\w.]+)[\"']", re.M)


@dataclass(frozen=True, slots=True)
class Part:
    name: str  # as shown: "middleware/", "mux.go", "Router (bottle.py)"
    path: str  # the directory or file it covers
    files: tuple[str, ...]
    role: Role | None
    landmarks: tuple[SymbolDef, ...]  # its most referenced definitions
    span: SymbolDef | None = None  # for a part that is one definition of a big file


@dataclass(frozen=True, slots=True)
class Edge:
    source: int  # index into `Architecture.parts`: the part that depends
    target: int
    names: tuple[str, ...]  # what of the target it names, most used first
    weight: int = 1  # how many distinct names of the target it uses


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    why: str  # "program entry", "console script `codecite`", "package.json main", "most used"
    definition: SymbolDef | None = None


@dataclass(frozen=True, slots=True)
class Architecture:
    repo: str
    parts: tuple[Part, ...]
    edges: tuple[Edge, ...]
    entries: tuple[Entry, ...]


class ArchitectureReader:
    """Reads and caches architectures; safe to share between threads."""

    def __init__(self, index: Index, symbols: SymbolLookup | None) -> None:
        self._index = index
        self._symbols = symbols
        self._cache: CommitCache[Architecture] = CommitCache(CACHE_SIZE)

    def of(self, state: RepoState) -> Architecture | None:
        """The architecture of an indexed repository; None when its symbols are not current."""
        cached = self._cache.get(state)
        if cached is not None:
            return cached
        table = self._symbols
        try:
            if table is None or table.commits().get(state.name) != state.commit:
                return None
            built = _Builder(self._index, table, state.name).build()
        except BotError as exc:
            log.warning("no architecture for %s: %s", state.name, exc.detail or exc.user_message)
            return None
        self._cache.put(state, built)
        return built

    def entry_sources(self, arch: Architecture, lines: int = ENTRY_LINES) -> list[Source]:
        """The code where reading starts: each entry point's first lines (its definition, or
        the file's head), as sources a model can be shown."""
        out: list[Source] = []
        for e in arch.entries:
            chunks = self._index.chunks_of(arch.repo, e.path)
            if not chunks:
                continue
            text = file_lines(chunks)
            first = e.definition.start_line if e.definition else min(text)
            last = min(max(text), first + lines - 1)
            if e.definition is not None:
                last = min(last, e.definition.end_line)
            body = "\n".join(text.get(n, "") for n in range(first, last + 1))
            symbol = e.definition.symbol if e.definition else ""
            language = chunks[0].language
            out.append(Source(arch.repo, e.path, language, first, last, symbol, body, 0.0))
        return out


class _Builder:
    def __init__(self, index: Index, table: SymbolLookup, repo: str) -> None:
        self._index = index
        self._table = table
        self._repo = repo
        self._texts: dict[str, str] = {}

    def build(self) -> Architecture:
        manifest = self._index.manifest(self._repo)
        ranked = _ranked(self._table, self._repo)
        plans = plan_parts(manifest, ranked)
        facts = self._table.file_facts(self._repo, [f for p in plans for f in p.files])
        parts = [self._part(plan, ranked, manifest) for plan in plans]
        defined = _defined_names(parts, {p: f.definitions for p, f in facts.items()})
        edges = self._edges(parts, defined)
        entries = self._entries(manifest, ranked)
        return Architecture(self._repo, tuple(parts), tuple(edges), tuple(entries))

    def text(self, path: str) -> str:
        """A file's indexed text (its chunks joined in line order)."""
        if path not in self._texts:
            lines = file_lines(self._index.chunks_of(self._repo, path))
            last = max(lines, default=0)
            self._texts[path] = "\n".join(lines.get(n, "") for n in range(1, last + 1))
        return self._texts[path]

    def _part(self, plan: PartPlan, ranked: Sequence[SymbolDef], manifest: Iterable[str]) -> Part:
        inside = set(plan.files)
        if plan.span is not None:
            span = plan.span
            return Part(
                plan.name, plan.path, plan.files, definition_role(self.text, span), (span,), span
            )
        landmarks = tuple(d for d in ranked if d.path in inside)[:LANDMARKS]
        if plan.merged:
            return Part(plan.name, plan.path, plan.files, None, landmarks)
        if plan.is_folder:
            role = folder_role(self.text, plan.path, plan.files, list(manifest))
            # else what its most central file says of itself
            central = [d.path for d in landmarks] + list(plan.files[:MAX_ROLE_FILES])
            for path in dict.fromkeys(central) if role is None else ():
                role = file_role(self.text, path)
                if role is not None:
                    break
        else:
            role = file_role(self.text, plan.path)
        if role is None and landmarks and not plan.is_folder:
            role = definition_role(self.text, landmarks[0])
        return Part(plan.name, plan.path, plan.files, role, landmarks)

    def _edges(self, parts: Sequence[Part], defined: dict[str, int]) -> list[Edge]:
        uses: dict[tuple[int, int], Counter[str]] = {}
        budget = MAX_FILES_READ
        for i, part in enumerate(parts):
            texts = self._part_texts(part, budget)
            budget -= len(texts)
            for text in texts:
                for name in set(_IDENT.findall(text)):
                    j = defined.get(name)
                    if j is not None and j != i:
                        uses.setdefault((i, j), Counter())[name] += 1
        edges = [
            Edge(i, j, tuple(n for n, _ in names.most_common(3)), len(names))
            for (i, j), names in uses.items()
        ]
        return sorted(edges, key=lambda e: (e.source, e.target))

    def _part_texts(self, part: Part, budget: int) -> list[str]:
        if part.span is not None:
            lines = self.text(part.span.path).split("\n")
            return ["\n".join(lines[part.span.start_line - 1 : part.span.end_line])]
        return [self.text(f) for f in part.files[: max(0, budget)]]

    def _entries(self, manifest: Mapping[str, object], ranked: Sequence[SymbolDef]) -> list[Entry]:
        """Declared entry points first (console scripts, package.json), then programs'
        `main`, `__main__.py`, and the definitions the rest of the code uses most."""
        found: list[Entry] = []
        for path in manifest:
            name = path.rsplit("/", 1)[-1]
            if name in ("pyproject.toml", "setup.cfg") and "/" not in path:
                found.extend(self._scripts(path))
            elif name == "package.json" and "/" not in path:
                found.extend(_package_entries(self.text(path), manifest))
            elif name == "Cargo.toml" and "/" not in path:
                found += [
                    Entry(p, "crate root (Cargo.toml)") for p in _CRATE_ROOTS if p in manifest
                ]
        mains = self._table.definitions("main", repos=frozenset({self._repo}), limit=20)
        for d in mains:
            if implementation(d.path) and d.kind in ("function", "method"):
                found.append(Entry(d.path, "program entry", d))
        found += [Entry(p, "runs as `python -m`") for p in manifest if _is_main_module(p)]
        found += [Entry(d.path, "named after the project", d) for d in self._namesakes()]
        used = [d for d in ranked if d.kind in _TOP_KINDS and telling(d.name)]
        found.extend(Entry(d.path, "most used by the rest of the code", d) for d in used[:2])
        unique: dict[tuple[str, str], Entry] = {}
        for e in found:
            key = (e.path, e.definition.symbol if e.definition else "")
            unique.setdefault(key, e)
        return list(unique.values())[:MAX_ENTRIES]

    def _namesakes(self) -> list[SymbolDef]:
        """The class or function named like the repository (`Jsoup` in jsoup): a library's
        front door when it declares no entry point."""
        defs = self._table.definitions(self._repo, repos=frozenset({self._repo}), limit=20)
        return [
            d
            for d in defs
            if d.kind in _TOP_KINDS
            and d.name.lower() == self._repo.lower()
            and "." not in d.symbol
            and implementation(d.path)
        ][:1]

    def _scripts(self, path: str) -> list[Entry]:
        out = []
        for script, module, func in _SCRIPT.findall(self.text(path)):
            defs = self._table.definitions(func.rsplit(".", 1)[-1], repos=frozenset({self._repo}))
            module_path = module.replace(".", "/")
            d = next((d for d in defs if module_path in d.path), None)
            out.append(Entry(d.path if d else path, f"console script `{script}`", d))
        return out


def _is_main_module(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == "__main__.py" and implementation(path)


def _package_entries(text: str, manifest: Mapping[str, object]) -> list[Entry]:
    """`main`, `module`, `bin` and the `.` export of a package.json, when the files exist."""
    out = []
    for key in ("main", "module", "bin", "exports"):
        m = re.search(
            rf'"{key}"\s*:\s*(?:\{{[^}}]*?"(?:\.|import|default)"\s*:\s*)?"([^"]+)"', text
        )
        if m is None:
            continue
        target = m.group(1).lstrip("./")
        source = _source_of(target, manifest)
        if source:
            out.append(Entry(source, f"package.json `{key}`"))
    return out


def _source_of(built: str, manifest: Mapping[str, object]) -> str:
    """The indexed file a package.json entry points at (`dist/index.js` -> `source/index.ts`)."""
    if built in manifest:
        return built
    stem = built.rsplit(".", 1)[0].split("/", 1)[-1]
    for path in manifest:
        if path.rsplit(".", 1)[0].endswith(stem) and implementation(path):
            return path
    return ""


def _ranked(table: RankedSymbols, repo: str) -> list[SymbolDef]:
    return [
        r.definition
        for r in table.top_symbols(repo, limit=200)
        if implementation(r.definition.path)
    ]


def telling(name: str) -> bool:
    """A name whose mention says something: capitalised or compound (`RouteContext`,
    `legacyArgs`, `send_file`), not a plain word (`retry`, `split`) a local may also be."""
    if len(name) < MIN_NAME:
        return False
    body = name.strip("_$")
    return body[:1].isupper() or "_" in body or any(c.isupper() for c in body[1:])


def _defined_names(parts: Sequence[Part], defs: dict[str, tuple[SymbolDef, ...]]) -> dict[str, int]:
    """Each top-level name defined in exactly one part, with that part's index."""
    owner: dict[str, int] = {}
    shared: set[str] = set()
    for i, part in enumerate(parts):
        if part.span is not None:
            names = {part.span.name}
        else:
            names = {
                d.name
                for f in part.files
                for d in defs.get(f, ())
                if d.kind in _TOP_KINDS and "." not in d.symbol
            }
        for name in names:
            if not telling(name):
                continue
            if name in owner and owner[name] != i:
                shared.add(name)
            owner.setdefault(name, i)
    return {n: i for n, i in owner.items() if n not in shared}
