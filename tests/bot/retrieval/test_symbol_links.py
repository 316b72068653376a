"""Resolving names through imports and class bases, over a real symbol table filled from
a small framework laid out like a real one (tests/support/webapp.py)."""

from __future__ import annotations

import pytest

from bot.retrieval.symbol_links import Resolver
from bot.symbols.model import SymbolDef
from tests.support.webapp import FILES, symbol_table


@pytest.fixture
def resolver():
    table = symbol_table(FILES)
    yield Resolver(table, "webapp")
    table.close()


def one(resolver: Resolver, symbol: str) -> SymbolDef:
    found = [
        d for d in resolver._table.definitions(symbol, repos=None, limit=20) if d.symbol == symbol
    ]
    assert len(found) == 1, found
    return found[0]


def symbols(defs: list[SymbolDef]) -> list[str]:
    return [d.symbol for d in defs]


def test_module_names_resolve_to_files_as_the_importer_writes_them(resolver):
    app = "src/webapp/sansio/app.py"
    assert resolver.module_file(".scaffold", app) == "src/webapp/sansio/scaffold.py"
    assert resolver.module_file("..helpers", app) == "src/webapp/helpers.py"
    assert resolver.module_file(".", app) == "src/webapp/sansio/__init__.py"
    assert resolver.module_file("webapp.helpers", "tests/test_app.py") == "src/webapp/helpers.py"
    assert resolver.module_file("webapp", "tests/test_app.py") == "src/webapp/__init__.py"
    assert resolver.module_file("werkzeugish.utils", app) is None  # another package
    # Inside a package a file is not a top-level module: `import helpers` is someone else's.
    assert resolver.module_file("helpers", app) is None
    assert resolver.module_file(".missing", app) is None


def test_names_follow_imports_and_re_exports(resolver):
    app_class = resolver.name_in("tests/test_app.py", "App")  # webapp/__init__ re-exports it
    assert app_class.kind == "definition" and app_class.definition is not None
    assert (app_class.definition.path, app_class.definition.symbol) == ("src/webapp/app.py", "App")
    wrapped = resolver.chain("tests/test_app.py", "webapp")
    assert (wrapped.kind, wrapped.path) == ("module", "src/webapp/__init__.py")
    sent = resolver.attribute(wrapped, "send_file")
    assert sent.definition is not None and sent.definition.path == "src/webapp/helpers.py"
    external = resolver.chain("src/webapp/helpers.py", "werkzeugish.utils")
    assert (external.kind, external.name) == ("external", "werkzeugish.utils")
    alias = resolver.chain("src/webapp/cli.py", "h")
    assert (alias.kind, alias.path) == ("module", "src/webapp/helpers.py")
    assert resolver.name_in("src/webapp/cli.py", "nothing_bound").kind == "unknown"


def test_method_resolution_order_with_multiple_aliased_and_foreign_bases(resolver):
    app = one(resolver, "App")
    found = resolver.ancestry(app)
    assert symbols(found.order) == ["App", "BaseApp", "Scaffold", "HooksMixin"]
    assert found.unresolved == ["t.Generic"]
    member, chain = resolver.member(app, "register_error_handler")
    assert member is not None and member.symbol == "Scaffold.register_error_handler"
    assert symbols(chain) == ["App", "BaseApp", "Scaffold"]
    named, chain = resolver.member(app, "name")  # Scaffold only assigns `self.name`
    assert named is not None and named.symbol == "HooksMixin.name"
    assert resolver.member(app, "missing") == (None, [])


def test_c3_order_of_a_diamond_and_a_cycle_that_ends():
    table = symbol_table(
        {
            "shapes.py": """
            class Base:
                def area(self): ...
            class Left(Base):
                pass
            class Right(Base):
                def area(self): ...
            class Diamond(Left, Right):
                pass
            """,
            **{p: t for p, t in FILES.items() if p.endswith("cycle.py")},
        },
        "shapes",
    )
    resolver = Resolver(table, "shapes")
    diamond = next(d for d in table.definitions("Diamond", repos=None) if d.kind == "class")
    assert symbols(resolver.ancestry(diamond).order) == ["Diamond", "Left", "Right", "Base"]
    area, _ = resolver.member(diamond, "area")
    assert area is not None and area.symbol == "Right.area"  # C3: Right before Base
    loop = next(d for d in table.definitions("Loop", repos=None) if d.kind == "class")
    assert symbols(resolver.ancestry(loop).order) == ["Loop", "Knot"]
    twist, _ = resolver.member(loop, "twist")
    assert twist is not None and twist.symbol == "Knot.twist"
    table.close()


def test_bases_in_languages_without_imports_are_found_by_name():
    table = symbol_table(
        {
            "src/main/java/shop/Base.java": """
            package shop;
            public class Base {
                public void run() {}
            }
            """,
            "src/main/java/shop/Child.java": """
            package shop;
            public class Child extends Base implements Runnable {
            }
            """,
            "web/widget.ts": """
            import { Component } from "./component";
            export class Widget extends Component {}
            """,
            "web/component.ts": """
            export class Component {
              render(): void {}
            }
            """,
        },
        "poly",
    )
    resolver = Resolver(table, "poly")
    child = next(d for d in table.definitions("Child", repos=None) if d.kind == "class")
    run, chain = resolver.member(child, "run")
    assert run is not None and run.symbol == "Base.run" and symbols(chain) == ["Child", "Base"]
    assert resolver.ancestry(child).unresolved == ["Runnable"]  # the JDK's
    widget = next(d for d in table.definitions("Widget", repos=None) if d.kind == "class")
    render, _ = resolver.member(widget, "render")
    assert render is not None and render.path == "web/component.ts"
    table.close()
