"""A small web framework laid out like a real one, for resolving names through imports.

`src/webapp/` is a package (a `src` layout) whose `App` inherits most of what it
has: `App(_Base, t.Generic[T])` -> `BaseApp(Scaffold, HooksMixin)` (multiple
inheritance, with an alias and another package's base). Names clash on purpose:

- `send_file` is ours (`helpers.py`), another package's (`werkzeugish.utils`, called
  inside ours, and imported under the same name by `cli.py`) and a second one of ours
  (`legacy.py`), and it is called bare, through a package re-export (`webapp.send_file`),
  through module aliases (`import webapp.helpers as h`, `from . import helpers`) and on
  objects;
- `register_error_handler` is defined by `Scaffold` and overridden by `Blueprint`;
  `self.`, `super().` and `cls.` calls reach one or the other by the class they are in;
- `Loop` and `Knot` inherit from each other (a cycle a repository can hold).

Each call site's line is marked with a `# <tag>` comment for the tests (`line_with`).
"""

from __future__ import annotations

import textwrap

from bot.code.languages import language_for
from bot.store.symbols.table import SymbolStore
from bot.symbols.extract import extract_text
from tests.support.gitrepo import GitRepo

FILES: dict[str, str] = {
    "src/webapp/__init__.py": '''
"""The webapp package: what users import."""

from .app import App as App
from .blueprints import Blueprint as Blueprint
from .helpers import send_file as send_file
''',
    "src/webapp/sansio/__init__.py": "",
    "src/webapp/sansio/scaffold.py": '''
"""What apps and blueprints share."""


class Scaffold:
    def __init__(self, name):
        self.name = name
        self.handlers = {}

    def register_error_handler(self, code, handler):
        self.handlers[code] = handler

    def errorhandler(self, code):
        def decorator(f):
            self.register_error_handler(code, f)  # scaffold-self
            return f

        return decorator

    @classmethod
    def make(cls, name):
        made = cls(name)
        made.register_error_handler(500, None)  # scaffold-object
        return made
''',
    "src/webapp/sansio/hooks.py": '''
"""Request hooks, mixed into apps."""


class HooksMixin:
    def before_request(self, f):
        self.register_error_handler(400, f)  # mixin-self
        return f

    def name(self):
        return "hooks"
''',
    "src/webapp/sansio/app.py": '''
"""The app without I/O."""

from .hooks import HooksMixin
from .scaffold import Scaffold


class BaseApp(Scaffold, HooksMixin):
    def setup(self):
        super().register_error_handler(404, None)  # baseapp-super
''',
    "src/webapp/app.py": '''
"""The app users create."""

import typing as t

from . import helpers
from .helpers import send_file
from .sansio.app import BaseApp as _Base

T = t.TypeVar("T")


class App(_Base, t.Generic[T]):
    def send_static_file(self, filename):
        return send_file(filename)  # app-bare

    def send_twice(self, filename):
        helpers.send_file(filename)  # app-module
        return self.send_static_file(filename)

    def handle(self, error):
        self.register_error_handler(error, None)  # app-self
''',
    "src/webapp/helpers.py": '''
"""Helpers, some of them thin wrappers over another package."""

import werkzeugish.utils


def send_file(path, **options):
    return werkzeugish.utils.send_file(path, **options)  # helpers-external


def stream(chunks):
    for chunk in chunks:
        yield chunk
''',
    "src/webapp/blueprints.py": '''
"""Blueprints: scaffolds that override error handling."""

from .sansio.scaffold import Scaffold


class Blueprint(Scaffold):
    def register_error_handler(self, code, handler):
        super().register_error_handler(code, handler)  # blueprint-super

    def record(self, code):
        self.register_error_handler(code, None)  # blueprint-self
''',
    "src/webapp/legacy.py": '''
"""The old API, kept for compatibility."""


def send_file(path):
    return open(path, "rb")


def old_download(path):
    return send_file(path)  # legacy-bare
''',
    "src/webapp/cli.py": '''
"""Command line: uses another package's send_file under the same name."""

import webapp.helpers as h
from werkzeugish.utils import send_file


def download(path, response):
    send_file(path)  # cli-external
    h.send_file(path)  # cli-alias
    response.send_file(path)  # cli-object
''',
    "src/webapp/cycle.py": '''
"""Two classes that inherit from each other (Python rejects it at import; a repository
can still hold it)."""


class Loop(Knot):
    def spin(self):
        return self.twist()  # cycle-self


class Knot(Loop):
    def twist(self):
        return 1
''',
    "tests/test_app.py": """
import webapp
from webapp import App


def test_send():
    webapp.send_file("x")  # tests-package
    App("a").register_error_handler(500, None)  # tests-object
""",
}


def build_webapp(repo: GitRepo) -> GitRepo:
    for path, text in FILES.items():
        repo.write(path, text.lstrip("\n"))
    repo.commit("webapp")
    return repo


def line_with(path: str, tag: str) -> int:
    """The 1-based line of `path` that carries `# tag` (as `build_webapp` writes it)."""
    lines = FILES[path].lstrip("\n").split("\n")
    return next(i for i, line in enumerate(lines, start=1) if line.endswith(f"# {tag}"))


def symbol_table(files: dict[str, str], repo: str = "webapp") -> SymbolStore:
    """An in-memory symbol table holding `files` (path -> source, dedented), as ingest fills it."""
    table = SymbolStore.in_memory()
    rows = []
    for path, text in files.items():
        source = textwrap.dedent(text).lstrip("\n")
        rows.append((path, "k", extract_text(path, source, language_for(path) or "text")))
    table.apply(repo, rows)
    return table
