"""Which names are references, how calls are told, and how lines are found."""

from __future__ import annotations

import logging
import textwrap
from dataclasses import replace

import pytest
from tree_sitter import Query, QueryCursor

import bot.symbols.references as references_module
from bot.code.languages import SYNTAX_LANGUAGES, language_for
from bot.code.parse import parse_file
from bot.code.parsers import ts_language
from bot.code.queries import build_query, query_text, symbol_query
from bot.code.registry import registered
from bot.symbols.definitions import Definitions
from bot.symbols.extract import extract_parsed, extract_text
from bot.symbols.model import FileSymbols
from tests.support.paths import POLYGLOT

FIXTURES = POLYGLOT


def symbols(source: str, language: str = "python") -> FileSymbols:
    return extract_text("x", textwrap.dedent(source).lstrip("\n"), language).to_file_symbols()


def sites(found: FileSymbols, name: str) -> list[tuple[int, bool]]:
    return [(r.line, r.call) for r in found.references if r.name == name]


def names(found: FileSymbols) -> set[str]:
    return {r.name for r in found.references}


POSITIONS = """
import os.path
from pkg.sub import Thing as Alias, other


@register
class Widget(Base, metaclass=Meta):
    size: Size = 3

    def draw(self, canvas: Canvas, *rest: list[Layer]) -> shapes.Shape:
        text = canvas.label
        value = text
        try:
            render(text, value)
        except (KeyError, errors.Broken):
            raise Failure
        except Timeout as exc:
            pass
        return isinstance(value, (Circle, Square)) or issubclass(Kind, Other)
"""


def test_python_references_are_calls_members_types_and_imports():
    found = symbols(POSITIONS)
    assert sites(found, "os") == [(1, False)] and sites(found, "path") == [(1, False)]
    assert sites(found, "sub") == [(2, False)] and sites(found, "Thing") == [(2, False)]
    assert sites(found, "other") == [(2, False)]
    assert sites(found, "register") == [(5, False)]
    assert sites(found, "Base") == [(6, False)] and sites(found, "Meta") == [(6, False)]
    assert sites(found, "Size") == [(7, False)]
    assert sites(found, "Canvas") == [(9, False)] and sites(found, "Layer") == [(9, False)]
    assert sites(found, "Shape") == [(9, False)]  # a member in an annotation
    assert sites(found, "label") == [(10, False)]
    assert sites(found, "render") == [(13, True)]
    assert sites(found, "KeyError") == [(14, False)] and sites(found, "Broken") == [(14, False)]
    assert sites(found, "Failure") == [(15, False)] and sites(found, "Timeout") == [(16, False)]
    assert sites(found, "Circle") == [(18, False)] and sites(found, "Square") == [(18, False)]
    assert sites(found, "Other") == [(18, False)]
    assert sites(found, "isinstance") == [(18, True)]


def test_python_variables_and_parameters_are_not_references():
    found = symbols(POSITIONS)
    for variable in ("text", "value", "canvas", "rest", "exc", "size", "Alias", "Kind"):
        assert variable not in names(found), variable
    assert "Widget" not in names(found) and "draw" not in names(found)  # only defined here


CALLS = """
a = obj.run (1)
b = (obj.walk
     (2))
c = obj.jump \\
    (3)
d = obj.skip
(e, f) = g
h = [obj.hop  # a comment
     (4)]
i = obj.stay + obj.hold
j = obj.nest.deep()(5)
"""


def test_member_calls_are_read_from_the_source_and_the_tree():
    found = symbols(CALLS)
    assert sites(found, "run") == [(1, True)]
    assert sites(found, "walk") == [(2, True)]  # `(` on the next line, inside brackets
    assert sites(found, "jump") == [(4, True)]  # after a line continuation
    assert sites(found, "skip") == [(6, False)]  # the next statement starts with `(`
    assert sites(found, "hop") == [(8, True)]
    assert sites(found, "stay") == [(10, False)] and sites(found, "hold") == [(10, False)]
    assert sites(found, "nest") == [(11, False)] and sites(found, "deep") == [(11, True)]


def test_member_calls_agree_with_the_tree_on_every_fixture():
    text = (FIXTURES / "retry_queue.py").read_text(encoding="utf-8") + CALLS
    parsed = parse_file(text, "python")
    assert parsed is not None
    members = QueryCursor(symbol_query("python")).captures(parsed.root)["member"]
    expected = set()
    for node in members:
        call = node.parent.parent
        is_call = call.type == "call" and call.child_by_field_name("function") == node.parent
        line = parsed.table.line_of_byte(node.start_byte)
        expected.add((node.text.decode(), line, is_call))
    found = extract_parsed(parsed).to_file_symbols()
    got = {(r.name, r.line, r.call) for r in found.references}
    assert expected <= got
    assert len(expected) > 20


def test_long_runs_of_blanks_and_comments_after_a_member():
    # a backtracking pattern would take exponential time here (pytest-timeout stops it)
    text = "x = obj.name\n" + "#  a b c d e f g h i j k\n   \n" * 200 + "y = 1\n"
    found = symbols(text)
    assert sites(found, "name") == [(1, False)]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_rows_and_byte_offsets_give_the_same_references(monkeypatch, path):
    """The fast path (rows, no heads) agrees with offsets and the head check."""
    text = path.read_text(encoding="utf-8") + textwrap.dedent(POSITIONS) + CALLS
    fast = extract_text(path.name, text, "python")
    slow_reader = replace(references_module.READERS["python"], own_names=True)
    monkeypatch.setitem(references_module.READERS, "python", slow_reader)
    assert extract_text(path.name, text, "python") == fast
    assert fast.reference_count > 30


def test_odd_line_breaks_use_byte_offsets():
    text = "a = 1\rb = go()\x0cc = obj.call()\r\nd = obj.xy\u2028e = run()\n"
    found = extract_text("odd.py", text, "python").to_file_symbols()
    lines = text.splitlines()
    assert [(r.name, r.line) for r in found.references] == [
        ("go", 2),
        ("call", 3),
        ("xy", 4),
        ("run", 5),
    ]
    assert "run()" in lines[4]


def test_upper_case_objects_are_classes_not_variables():
    java = symbols(
        "class A {\n  void f() {\n    Audit.log(items.size());\n    int n = Limits.MAX;\n  }\n}\n",
        "java",
    )
    assert sites(java, "Audit") == [(3, False)] and sites(java, "Limits") == [(4, False)]
    assert "items" not in names(java) and sites(java, "size") == [(3, True)]
    js = symbols(
        "const total = parts.map(Number).reduce(add);\nconfig.limit = Limits.max;\n", "javascript"
    )
    assert "parts" not in names(js) and "config" not in names(js) and "total" not in names(js)
    assert sites(js, "Limits") == [(2, False)] and sites(js, "map") == [(1, True)]
    assert sites(js, "add") == []  # a value passed along, like a variable


def test_every_language_records_its_calls_and_no_local_variables():
    cases = {
        "go": "package p\nfunc f(total int) int {\n\tcount := total\n\treturn helper(count)\n}\n",
        "rust": "fn f(total: u32) -> u32 {\n    let count = total;\n    helper(count)\n}\n",
        "c": "int f(int total) {\n    int count = total;\n    return helper(count);\n}\n",
        "csharp": "class A {\n  int F(int total) {\n    var count = total;\n"
        "    return Helper(count);\n  }\n}\n",
        "typescript": "function f(total: number) {\n  const count = total;\n"
        "  return helper(count);\n}\n",
    }
    for language, source in cases.items():
        found = symbols(source, language)
        assert not {"total", "count"} & names(found), language
        assert any(r.call for r in found.references), language


def test_patterns_a_grammar_does_not_know_are_left_out(caplog):
    ts = ts_language("python")
    with caplog.at_level(logging.INFO, logger="bot.code.queries"):
        query = build_query(
            ts,
            "[(function_definition) (no_such_type)] @def\n(no_such_node) @ref\n(call) @call",
        )
    assert query.pattern_count == 2
    assert "no_such_node" in caplog.text and "no_such_type" in caplog.text
    assert sorted(query.capture_name(i) for i in range(query.capture_count)) == ["call", "def"]


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(FIXTURES.iterdir()) if language_for(p.name) in SYNTAX_LANGUAGES],
    ids=lambda p: p.name,
)
def test_fixtures_have_references_but_few_per_line(path):
    text = path.read_text(encoding="utf-8")
    language = language_for(path.name)
    assert language is not None
    packed = extract_text(path.name, text, language)
    lines = len(text.splitlines())
    assert 0 < packed.reference_count < 3 * lines


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(FIXTURES.iterdir()) if language_for(p.name) in SYNTAX_LANGUAGES],
    ids=lambda p: p.name,
)
def test_definitions_read_from_the_tables_are_the_grammars(path):
    """The table shortcut in `Definitions` finds what `Grammar.definition` finds."""
    language = language_for(path.name)
    assert language is not None
    parsed = parse_file(path.read_text(encoding="utf-8"), language)
    assert parsed is not None
    candidates = QueryCursor(symbol_query(language)).captures(parsed.root)["def"]
    entry = registered(language)
    assert entry is not None
    grammar = entry.grammar
    found = []
    for tables in (True, False):
        defs = Definitions(grammar, parsed.src, parsed.table, keep_heads=True)
        defs.tables = defs.tables and tables
        defs.add_all(candidates)
        found.append((defs.defs, defs.heads))
    assert found[0] == found[1]
    assert found[0][0]


@pytest.mark.parametrize("language", sorted(SYNTAX_LANGUAGES))
def test_every_pattern_compiles_in_one_query(language: str) -> None:
    """No language falls back to compiling its patterns one by one (a slow first ingest)."""
    Query(ts_language(language), query_text(language))
