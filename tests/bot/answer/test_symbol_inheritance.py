"""Symbol answers through imports and class bases, end to end: a real git repository (the
framework of tests/support/webapp.py), a real ingest into SQLite, `Core.ask`, no model."""

from __future__ import annotations

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from tests.support.webapp import FILES, build_webapp, line_with

SCAFFOLD, APP, HELPERS = (
    "src/webapp/sansio/scaffold.py",
    "src/webapp/app.py",
    "src/webapp/helpers.py",
)


def line_of(path: str, text: str) -> int:
    lines = FILES[path].lstrip("\n").split("\n")
    return next(i for i, line in enumerate(lines, start=1) if text in line)


@pytest.fixture
def core(make_repo):
    repo = build_webapp(make_repo("webapp"))
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="webapp")
    yield core
    core.close()


def test_an_inherited_method_is_answered_with_the_base_that_defines_it(core):
    answer = core.ask("where is App.register_error_handler defined?", CLI)
    start = line_of(SCAFFOLD, "def register_error_handler")
    app = line_of(APP, "class App(")
    assert answer.text.startswith(
        "`App.register_error_handler` is inherited from `Scaffold`: it is defined in "
        f"**{SCAFFOLD}:L{start}-L{start + 1}** (method `Scaffold.register_error_handler`). "
        f"`App` (**{APP}:L{app}-L"
    )
    assert "gets it through `App` → `BaseApp` → `Scaffold`." in answer.text
    assert "I found no definition" not in answer.text
    assert [c.path for c in answer.citations][:2] == [SCAFFOLD, APP]
    assert "def register_error_handler(self, code, handler):" in answer.text  # the excerpt


def test_a_member_no_class_in_the_order_defines_names_the_foreign_base(core):
    answer = core.ask("where is `App.teardown` defined?", CLI)
    assert answer.text.startswith(
        f"I found no definition of `teardown` in class `App` ({APP}:L{line_of(APP, 'class App(')}-L"
    )
    assert "it may come from `t.Generic`, which is not indexed." in answer.text


def test_who_calls_keeps_our_calls_and_leaves_out_another_packages(core):
    answer = core.ask("who calls send_file?", CLI)
    text = answer.text
    assert text.startswith("Called from 5 places in 4 files:")  # the call sites first
    assert "\n\n`send_file` has 2 definitions:" in text  # then the definitions
    for path, tag in (
        (APP, "app-bare"),
        (APP, "app-module"),
        ("src/webapp/cli.py", "cli-alias"),
        ("tests/test_app.py", "tests-package"),
        ("src/webapp/legacy.py", "legacy-bare"),
    ):
        assert f"**{path}:L{line_with(path, tag)}**" in text, tag
    assert f"**{HELPERS}:L{line_with(HELPERS, 'helpers-external')}**" not in text
    # Which of the two definitions each call reaches.
    assert "Called from 5 places in 4 files:" in text
    assert f"`return send_file(filename)  # app-bare` → `send_file` in {HELPERS}\n" in text
    assert "`return send_file(path)  # legacy-bare` → `send_file` in src/webapp/legacy.py" in text
    cli = "src/webapp/cli.py"
    assert (
        "Left out, 3 calls of another definition of the name: "
        f"{cli}:L{line_with(cli, 'cli-external')} calls `werkzeugish.utils.send_file`; "
        f"{cli}:L{line_with(cli, 'cli-object')} calls `.send_file()`; "  # a response's method
        f"{HELPERS}:L{line_with(HELPERS, 'helpers-external')} calls "
        "`werkzeugish.utils.send_file`.\n\n"
    ) in text


def test_who_calls_a_method_follows_self_super_and_overrides(core):
    answer = core.ask("who calls Scaffold.register_error_handler?", CLI)
    text = answer.text
    assert f"**{SCAFFOLD}:L{line_with(SCAFFOLD, 'scaffold-self')}** in " in text
    assert f"**{APP}:L{line_with(APP, 'app-self')}** in `App.handle`" in text
    objects = f"{SCAFFOLD}:L{line_with(SCAFFOLD, 'scaffold-object')}** in `Scaffold.make`"
    assert objects in text and "(called on an object)" in text
    blueprint = "src/webapp/blueprints.py"
    self_call = line_with(blueprint, "blueprint-self")
    assert f"{blueprint}:L{self_call} calls `Blueprint.register_error_handler`" in text
