"""Module names as imports write them -> the indexed files or package directories they mean.

One repository's paths, built once a question (string operations only):

- Python: `flask.sansio.scaffold`, `.scaffold` from a file of the package (see `_Python`);
- JavaScript and TypeScript: relative specifiers (`./x`, `../lib/y.js`) with the usual
  extensions and `index` files; a bare specifier (`lodash`) is another package;
- Go: an import path names a directory, found by its longest suffix
  (`github.com/go-chi/chi/v5/middleware` -> `middleware/`); the module's own root
  package is the one whose package name the path ends with (`Modules.root_package`);
- Rust: `crate::de`, `self::value`, `super::x` from the crate root (the directory of
  `lib.rs` or `main.rs`) or the importing module, as `a.rs` or `a/mod.rs`; a path into
  another crate is none of ours, unless it names this one (the repository's name);
- Java: a package (`com.google.gson`) is the directory ending with its path.

A package directory is returned as its path plus "/" (`PACKAGE`; "/" alone for the
root), a module file as its path; None when the repository does not hold it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from bot.retrieval.symbol_language import language_of

PACKAGE = "/"  # what a package directory's path ends with
_PY = (".py", ".pyi")
_MODULE_FILES = (".py", ".pyi", "/__init__.py", "/__init__.pyi")
_JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})


def package_dir(found: str) -> str | None:
    """The directory of a package result ("" for the root), None for a module file."""
    return found[: -len(PACKAGE)] if found.endswith(PACKAGE) else None


class Modules:
    def __init__(self, paths: Iterable[str], repo: str = "") -> None:
        files = list(paths)
        self._files = frozenset(files)
        self._python = _Python([p for p in files if p.endswith(_PY)])
        self._dirs: dict[str, set[str]] = {}  # language -> directories holding its files
        for path in files:
            language = language_of(path)
            if language in ("go", "java"):
                self._dirs.setdefault(language, set()).add(posixpath.dirname(path))
        self._crate = repo.replace("-", "_").lower()

    def find(self, module: str, importer: str) -> str | None:
        language = language_of(importer)
        if language == "python":
            return self._python.find(module, importer)
        if language in _JS_LANGUAGES:
            return self._script(module, importer)
        if language == "go":
            return self._go(module)
        if language == "rust":
            return self._rust(module, importer)
        if language == "java":
            return self._java(module)
        return None

    def files_in(self, directory: str, language: str) -> list[str]:
        """The files of `language` directly in `directory` ("" for the root)."""
        return sorted(
            p
            for p in self._files
            if posixpath.dirname(p) == directory and language_of(p) == language
        )

    # -- per language ----------------------------------------------------------------------

    def _script(self, module: str, importer: str) -> str | None:
        if not module.startswith("."):
            return None  # another package (`lodash`, `node:fs`)
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        stems = [base]
        stem, ext = posixpath.splitext(base)
        if ext in (".js", ".jsx", ".mjs", ".cjs"):  # TypeScript imports `./x.js` for `x.ts`
            stems.append(stem)
        for candidate in stems:
            if candidate in self._files:
                return candidate
            for ending in (*_JS_EXTENSIONS, *(f"/index{e}" for e in _JS_EXTENSIONS)):
                if f"{candidate}{ending}" in self._files:
                    return f"{candidate}{ending}"
        return None

    def _go(self, module: str) -> str | None:
        dirs = self._dirs.get("go", set())
        found = [d for d in dirs if d and (module == d or module.endswith("/" + d))]
        if found:
            return max(found, key=len) + PACKAGE
        return None

    def root_package(self) -> str | None:
        """A Go file of the root directory, whose package name the caller reads."""
        root = self.files_in("", "go")
        return next((p for p in root if not p.endswith("_test.go")), None)

    def _java(self, module: str) -> str | None:
        wanted = module.replace(".", "/")
        dirs = self._dirs.get("java", set())
        found = [d for d in dirs if d == wanted or d.endswith("/" + wanted)]
        return min(found, key=lambda d: ("test" in d, len(d), d)) + PACKAGE if found else None

    def _rust(self, module: str, importer: str) -> str | None:
        parts = [p for p in module.replace("::", ".").split(".") if p]
        if not parts:
            return None
        root = self._crate_root(importer)
        first, rest = parts[0], parts[1:]
        if first == "crate" or first == self._crate:
            base = root
        elif first in ("self", "super"):
            base = self._module_dir(importer)
            if first == "super":
                base = posixpath.dirname(base)
        else:  # `mod x` at the crate root written without `crate::`, or another crate
            base, rest = root, parts
            if self._rust_file(root, first) is None:
                return None
        current = self._rust_file(base, "")
        for part in rest:
            found = self._rust_file(base, part)
            if found is None:
                return None  # an item of a module, or a module not indexed
            current, base = found, posixpath.join(base, part)
        return current

    def _rust_file(self, directory: str, name: str) -> str | None:
        if not name:
            for root_file in ("lib.rs", "main.rs", "mod.rs"):
                if posixpath.join(directory, root_file) in self._files:
                    return posixpath.join(directory, root_file)
            return None
        for candidate in (f"{name}.rs", f"{name}/mod.rs"):
            if posixpath.join(directory, candidate) in self._files:
                return posixpath.join(directory, candidate)
        return None

    def _crate_root(self, importer: str) -> str:
        directory = posixpath.dirname(importer)
        while True:
            if any(posixpath.join(directory, f) in self._files for f in ("lib.rs", "main.rs")):
                return directory
            if not directory:
                return "src" if "src/lib.rs" in self._files else ""
            directory = posixpath.dirname(directory)

    @staticmethod
    def _module_dir(importer: str) -> str:
        """The directory holding the children of the module `importer` is."""
        directory, name = posixpath.split(importer)
        if name in ("lib.rs", "main.rs", "mod.rs"):
            return directory
        return posixpath.join(directory, name.removesuffix(".rs"))


class _Python:
    """Module names -> indexed files. An absolute name matches a file whose path ends with
    it, below a directory that is not itself a package (a source root: the repository,
    `src/`, a script's directory); the shortest such path wins, code before tests."""

    def __init__(self, files: list[str]) -> None:
        self._files = frozenset(files)
        packages = {p.rpartition("/")[0] for p in files if is_init(p)}
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


def is_init(path: str) -> bool:
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")
