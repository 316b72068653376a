"""Which call sites can reach the definitions asked about, on tests/support/webapp.py: every
tagged call judged, for several questions about the same names."""

from __future__ import annotations

import pytest

from bot.retrieval.symbol_calls import BY_NAME, ON_OBJECT, OVERRIDE, CallJudge
from bot.symbols.model import SymbolDef, SymbolRef
from tests.support.webapp import FILES, line_with, symbol_table

TAGS = {
    tag: (path, line_with(path, tag))
    for path, text in FILES.items()
    for tag in (line.rsplit("# ", 1)[1] for line in text.split("\n") if "  # " in line)
}


@pytest.fixture(scope="module")
def table():
    store = symbol_table(FILES)
    yield store
    store.close()


def defs(table, *symbols: str) -> list[SymbolDef]:
    out = []
    for symbol in symbols:
        out += [
            d for d in table.definitions(symbol, repos=None) if d.symbol == symbol.split(":")[-1]
        ]
    return out


def verdicts(table, name: str, targets: list[SymbolDef]) -> dict[str, tuple[str, str, str]]:
    """tag -> (verdict, how, what it reaches instead or the target it reaches)."""
    sites = table.references(name, repos=None, calls_only=True, limit=500)
    by_line = {(s.path, s.line): s for s in sites}
    judged = {id(a.site): a for a in CallJudge(table, targets).judge_all(sites)}
    out = {}
    for tag, place in TAGS.items():
        site: SymbolRef | None = by_line.get(place)
        if site is None or site.name != name:
            continue
        a = judged[id(site)]
        reached = a.reaches.symbol if a.reaches is not None else a.instead
        out[tag] = (a.verdict, a.how, reached)
    return out


def test_who_calls_send_file_keeps_ours_and_names_what_the_others_reach(table):
    targets = [d for d in table.definitions("send_file", repos=None) if d.kind == "function"]
    assert sorted(d.path for d in targets) == ["src/webapp/helpers.py", "src/webapp/legacy.py"]
    assert verdicts(table, "send_file", targets) == {
        "app-bare": ("yes", "imported", "send_file"),
        "app-module": ("yes", "module", "send_file"),
        "helpers-external": ("no", "module", "werkzeugish.utils.send_file"),
        "legacy-bare": ("yes", "defined here", "send_file"),
        "cli-external": ("no", "imported", "werkzeugish.utils.send_file"),
        "cli-alias": ("yes", "module", "send_file"),
        "cli-object": ("no", ON_OBJECT, ".send_file()"),  # a method of another object
        "tests-package": ("yes", "module", "send_file"),  # through webapp/__init__.py
    }


def test_a_namesake_in_the_calling_file_is_not_the_one_asked_about(table):
    helpers = [d for d in defs(table, "send_file") if d.path.endswith("helpers.py")]
    found = verdicts(table, "send_file", helpers)
    assert found["legacy-bare"] == ("no", "defined here", "send_file")
    assert found["app-bare"][0] == found["tests-package"][0] == "yes"


def test_self_and_super_calls_follow_the_class_they_are_written_in(table):
    scaffold = defs(table, "Scaffold.register_error_handler")
    assert verdicts(table, "register_error_handler", scaffold) == {
        "scaffold-self": ("yes", "self", "Scaffold.register_error_handler"),
        "scaffold-object": ("maybe", ON_OBJECT, ""),
        "mixin-self": ("maybe", BY_NAME, ""),  # a mixin's call: whatever class it is mixed into
        "baseapp-super": ("yes", "super", "Scaffold.register_error_handler"),
        "app-self": ("yes", "self", "Scaffold.register_error_handler"),  # App -> BaseApp -> ...
        "blueprint-super": ("yes", "super", "Scaffold.register_error_handler"),
        # Blueprint overrides it: its own self-call reaches the override.
        "blueprint-self": ("no", "self", "Blueprint.register_error_handler"),
        "tests-object": ("maybe", ON_OBJECT, ""),
    }


def test_a_call_in_a_base_class_may_reach_an_override_below_it(table):
    blueprint = defs(table, "Blueprint.register_error_handler")
    found = verdicts(table, "register_error_handler", blueprint)
    assert found["blueprint-self"] == ("yes", "self", "Blueprint.register_error_handler")
    assert found["scaffold-self"] == ("maybe", OVERRIDE, "")  # self may be a Blueprint
    assert found["app-self"] == ("no", "self", "Scaffold.register_error_handler")
    assert found["blueprint-super"] == ("no", "super", "Scaffold.register_error_handler")


def test_a_cycle_of_bases_still_resolves_what_it_can(table):
    twist = defs(table, "Knot.twist")
    assert verdicts(table, "twist", twist) == {"cycle-self": ("yes", "self", "Knot.twist")}


def test_sites_without_forms_are_kept_by_name(table):
    target = defs(table, "Scaffold.register_error_handler")
    old = SymbolRef("webapp", "src/webapp/app.py", "register_error_handler", 3, "", True, 0)
    judged = CallJudge(table, target).judge(old)
    assert (judged.verdict, judged.how) == ("maybe", BY_NAME)


def test_a_bare_builtin_name_is_the_builtin_unless_a_star_import_may_bind_it():
    store = symbol_table(
        {
            "pkg/files.py": "def open(path):\n    return path\n",
            "pkg/read.py": "def read(path):\n    return open(path)\n",
            "pkg/star.py": "from pkg.files import *\n\n\ndef read(path):\n    return open(path)\n",
            "pkg/other.py": "from os import *\n\n\ndef read(path):\n    return open(path)\n",
        },
        "pkg",
    )
    try:
        targets = store.definitions("open", repos=None)
        sites = store.references("open", repos=None, calls_only=True)
        found = {
            a.site.path: (a.verdict, a.how) for a in CallJudge(store, targets).judge_all(sites)
        }
        assert found == {
            "pkg/read.py": ("no", "builtin"),
            "pkg/star.py": ("yes", "imported"),  # through the star import
            "pkg/other.py": ("maybe", BY_NAME),  # another package's star import may bind it
        }
    finally:
        store.close()


def test_self_and_super_calls_never_reach_a_module_function():
    files = {
        "pkg/main.py": """
            def get_command(app):
                return app

            def run(app):
                return get_command(app)
            """,
        "pkg/cli.py": """
            import click

            class Group(click.Group):
                def get_command(self, ctx, name):
                    return super().get_command(ctx, name)

                def invoke(self, ctx):
                    return self.get_command(ctx, "x")
            """,
    }
    table = symbol_table(files, repo="pkg")
    sites = table.references("get_command", repos=None, calls_only=True, limit=50)

    def judged(kind: str) -> dict[tuple[str, int], tuple[str, str]]:
        targets = [d for d in table.definitions("get_command", repos=None) if d.kind == kind]
        return {
            (a.site.path, a.site.line): (a.verdict, a.instead)
            for a in CallJudge(table, targets).judge_all(sites)
        }

    try:
        # the module's function: `super().get_command` goes to click's base, not to it
        assert judged("function") == {
            ("pkg/main.py", 5): ("yes", ""),
            ("pkg/cli.py", 5): ("no", "super().get_command"),
            ("pkg/cli.py", 8): ("no", "Group.get_command"),
        }
        # the method: the call through a base that is not indexed stays a "maybe"
        assert judged("method") == {
            ("pkg/main.py", 5): ("no", "get_command"),
            ("pkg/cli.py", 5): ("maybe", ""),
            ("pkg/cli.py", 8): ("yes", ""),
        }
    finally:
        table.close()
