"""Definitions and references from real tree-sitter parses, in several languages."""

from __future__ import annotations

import logging
import textwrap

import pytest

import bot.symbols.definitions as definitions_module
from bot.code.chunking import ChunkBudget, analyze_file
from bot.code.languages import language_for
from bot.code.parse import parse_file
from bot.symbols.extract import analyze, extract, extract_parsed, extract_text
from bot.symbols.model import FileSymbols, Reference
from bot.symbols.packed import EMPTY, CallerMap, PackedSymbols
from tests.support.paths import POLYGLOT

FIXTURES = POLYGLOT


def symbols(source: str, language: str) -> FileSymbols:
    parsed = parse_file(textwrap.dedent(source).lstrip("\n"), language)
    assert parsed is not None
    return extract(parsed.root, parsed.src, parsed.table, language)


def defs(found: FileSymbols) -> set[tuple[str, str, int, int]]:
    return {(d.symbol, d.kind, d.start_line, d.end_line) for d in found.definitions}


def refs(found: FileSymbols, name: str) -> list[tuple[int, str, bool]]:
    return [(r.line, r.caller, r.call) for r in found.references if r.name == name]


def names(found: FileSymbols) -> set[str]:
    return {r.name for r in found.references}


PYTHON = """
import os.path
from pkg import mod


class Session(Base):
    retries: int = 3

    @cached(size=10)
    def send(self, request):
        self.adapter.send(request)
        return pkg.mod.Thing(request)

    def close(self):
        def drain(queue):
            return queue.clear()
        drain(self.pending)
        return helper(self.send)


def helper(fn):
    return fn(x=1)
"""


def test_python_definitions_are_qualified_and_exclude_decorators():
    found = symbols(PYTHON, "python")
    assert defs(found) == {
        ("Session", "class", 5, 17),
        ("Session.send", "method", 9, 11),  # the decorator on line 8 is not part of it
        ("Session.close", "method", 13, 17),
        ("Session.close.drain", "function", 14, 15),
        ("helper", "function", 20, 21),
    }
    assert [d.name for d in found.definitions] == ["Session", "send", "close", "drain", "helper"]


def test_python_calls_members_and_callers():
    found = symbols(PYTHON, "python")
    # `self.adapter.send(...)` calls `send`; `helper(self.send)` only refers to it
    assert refs(found, "send") == [(10, "Session.send", True), (17, "Session.close", False)]
    assert refs(found, "Thing") == [(11, "Session.send", True)]
    assert refs(found, "mod") == [(2, "", False), (11, "Session.send", False)]
    assert refs(found, "pkg") == [(2, "", False)]  # its import; `pkg.mod` reads a plain name
    assert refs(found, "adapter") == [(10, "Session.send", False)]
    assert refs(found, "pending") == [(16, "Session.close", False)]
    assert refs(found, "cached") == [(8, "Session", True)]  # a decorator line belongs to the class
    assert refs(found, "drain") == [(16, "Session.close", True)]
    assert refs(found, "clear") == [(15, "Session.close.drain", True)]
    assert refs(found, "helper") == [(17, "Session.close", True)]
    assert refs(found, "Base") == [(5, "Session", False)]


def test_python_skips_own_names_short_names_and_self():
    found = symbols(PYTHON, "python")
    assert "Session" not in names(found)  # only ever defined here
    assert refs(found, "close") == []
    assert "self" not in names(found) and "x" not in names(found) and "fn" in names(found)
    assert "request" not in names(found) and "queue" not in names(found)  # parameters
    assert refs(found, "os") == [(1, "", False)]


def test_repeated_uses_on_one_line_are_kept_once():
    found = symbols("total = box.count(a) + box.count(b) + box.count\n", "python")
    assert refs(found, "count") == [(1, "", False), (1, "", True)]


def test_recursion_is_a_reference_but_the_definition_name_is_not():
    found = symbols("def walk(node):\n    return [walk(c) for c in node.children]\n", "python")
    assert refs(found, "walk") == [(2, "walk", True)]


JAVASCRIPT = """
import { Client } from "./client";

export class Store extends Base {
  load(id) {
    const parse = (raw) => JSON.parse(raw);
    return parse(this.client.fetch(id));
  }
}

export function makeStore(options) {
  return new Store(new Client(options));
}

Store.prototype.save = function (item) {
  return this.client.put(item);
};
"""


def test_javascript_definitions_calls_and_constructors():
    found = symbols(JAVASCRIPT, "javascript")
    assert defs(found) == {
        ("Store", "class", 3, 8),
        ("Store.load", "method", 4, 7),
        ("Store.load.parse", "function", 5, 5),
        ("makeStore", "function", 10, 12),
        ("Store.save", "method", 14, 16),
    }
    # `new Store(...)` calls it; the prototype assignment names it
    assert refs(found, "Store") == [(11, "makeStore", True), (14, "Store.save", False)]
    assert refs(found, "Client") == [(1, "", False), (11, "makeStore", True)]
    assert refs(found, "fetch") == [(6, "Store.load", True)]
    assert refs(found, "parse") == [(5, "Store.load.parse", True), (6, "Store.load", True)]
    assert refs(found, "client") == [(6, "Store.load", False), (15, "Store.save", False)]
    assert refs(found, "Base") == [(3, "Store", False)]


TYPESCRIPT = """
interface Repo<T> {
  find(id: string): Promise<T>;
}

export class UserRepo implements Repo<User> {
  private cache: Map<string, User> = new Map();

  async find(id: string): Promise<User> {
    return this.cache.get(id) ?? loadUser(id);
  }
}
"""


def test_typescript_types_are_references():
    found = symbols(TYPESCRIPT, "typescript")
    assert defs(found) == {
        ("Repo", "interface", 1, 3),
        ("UserRepo", "class", 5, 11),
        ("UserRepo.find", "method", 8, 10),
    }
    assert refs(found, "User") == [
        (5, "UserRepo", False),
        (6, "UserRepo", False),
        (8, "UserRepo.find", False),
    ]
    assert refs(found, "Repo") == [(5, "UserRepo", False)]
    assert refs(found, "Map") == [(6, "UserRepo", False), (6, "UserRepo", True)]
    assert refs(found, "loadUser") == [(9, "UserRepo.find", True)]
    assert refs(found, "get") == [(9, "UserRepo.find", True)]


def test_tsx_components_are_called():
    found = symbols("function App() {\n  return <Layout title={name()} />;\n}\n", "tsx")
    assert refs(found, "Layout") == [(2, "App", True)]
    assert refs(found, "name") == [(2, "App", True)]


GO = """
package cache

type Cache struct {
	items map[string]Item
}

func (c *Cache) Get(key string) (Item, bool) {
	item, ok := c.items[key]
	log.Println(key)
	return item, ok
}

func New() *Cache {
	return &Cache{items: make(map[string]Item)}
}
"""


def test_go_receivers_selectors_and_predeclared_names():
    found = symbols(GO, "go")
    assert defs(found) == {
        ("Cache", "struct", 3, 5),
        ("Cache.Get", "method", 7, 11),
        ("New", "function", 13, 15),
    }
    assert refs(found, "Cache") == [(7, "Cache.Get", False), (13, "New", False), (14, "New", False)]
    assert refs(found, "Println") == [(9, "Cache.Get", True)]
    # the field's declaration is not a use; a selector and a composite literal key are
    assert refs(found, "items") == [(8, "Cache.Get", False), (14, "New", False)]
    assert refs(found, "log") == [(9, "Cache.Get", False)]  # a package, named by a selector
    assert "key" not in names(found) and "item" not in names(found)  # variables
    assert refs(found, "Get") == []
    assert not {"string", "bool", "nil"} & names(found)


JAVA = """
package com.shop;

import java.util.List;

@Service
public class Ledger extends Base {
    private final List<Entry> entries;

    @Override
    public void record(Entry entry) {
        entries.add(entry);
        Audit.log(new Entry(entry.amount()));
    }
}
"""


def test_java_annotations_are_not_part_of_the_definition():
    found = symbols(JAVA, "java")
    assert defs(found) == {("Ledger", "class", 6, 14), ("Ledger.record", "method", 10, 13)}
    assert refs(found, "Entry") == [
        (7, "Ledger", False),
        (10, "Ledger.record", False),
        (12, "Ledger.record", True),
    ]
    assert refs(found, "log") == [(12, "Ledger.record", True)]
    assert refs(found, "Audit") == [(12, "Ledger.record", False)]
    assert refs(found, "Service") == [(5, "", False)]
    assert refs(found, "Override") == [(9, "Ledger", False)]


RUST = """
use std::fmt;

pub struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    pub fn push(&mut self, item: T) {
        self.items.push(item);
        trace!("pushed");
    }
}

impl fmt::Display for Stack<u8> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&render(&self.items))
    }
}
"""


def test_rust_impls_methods_and_macros():
    found = symbols(RUST, "rust")
    assert defs(found) == {
        ("Stack", "struct", 3, 5),
        ("Stack", "impl", 7, 12),
        ("Stack.push", "method", 8, 11),
        ("Stack", "impl", 14, 18),
        ("Stack.fmt", "method", 15, 17),
    }
    assert refs(found, "push") == [(9, "Stack.push", True)]
    assert refs(found, "trace") == [(10, "Stack.push", True)]
    assert refs(found, "render") == [(16, "Stack.fmt", True)]
    assert refs(found, "write_str") == [(16, "Stack.fmt", True)]
    assert refs(found, "Display") == [(14, "Stack", False)]
    assert refs(found, "Stack") == []  # every mention names a definition: struct or impl


C = """
#include <stdio.h>

typedef struct node {
    struct node *next;
    int value;
} node_t;

static int sum(node_t *head) {
    int total = 0;
    for (node_t *n = head; n != NULL; n = n->next) {
        total += n->value;
    }
    printf("%d", total);
    return total;
}
"""


def test_c_typedefs_fields_and_calls():
    found = symbols(C, "c")
    assert defs(found) == {("node_t", "struct", 3, 6), ("sum", "function", 8, 15)}
    assert refs(found, "node_t") == [(8, "sum", False), (10, "sum", False)]
    assert refs(found, "next") == [(10, "sum", False)]  # its declaration is not a use
    assert "total" not in names(found) and "head" not in names(found)  # variables
    assert refs(found, "printf") == [(13, "sum", True)]
    assert "NULL" not in names(found)


CPP = """
namespace geo {
class Matrix {
public:
    double at(int row, int col) const;
};
}

double geo::Matrix::at(int row, int col) const {
    auto cell = new Cell(row, col);
    return cell->value() + std::abs(helper<double>(row));
}
"""


def test_cpp_out_of_class_methods_and_templates():
    found = symbols(CPP, "cpp")
    assert defs(found) == {
        ("geo", "namespace", 1, 6),
        ("geo.Matrix", "class", 2, 5),
        ("geo.Matrix.at", "method", 8, 11),
    }
    assert refs(found, "Cell") == [(9, "geo.Matrix.at", True)]
    assert refs(found, "value") == [(10, "geo.Matrix.at", True)]
    assert refs(found, "abs") == [(10, "geo.Matrix.at", True)]
    assert refs(found, "helper") == [(10, "geo.Matrix.at", True)]
    assert refs(found, "Matrix") == [(8, "geo.Matrix.at", False)]  # its qualifier uses it


def test_csharp_ruby_and_php_calls():
    cs = symbols(
        "namespace Shop {\n  class Hub {\n    void Notify() { Sender.Send<Message>(new Message()); }\n"
        "  }\n}\n",
        "csharp",
    )
    assert defs(cs) == {
        ("Shop", "namespace", 1, 5),
        ("Shop.Hub", "class", 2, 4),
        ("Shop.Hub.Notify", "method", 3, 3),
    }
    assert refs(cs, "Send") == [(3, "Shop.Hub.Notify", True)]
    assert refs(cs, "Message") == [(3, "Shop.Hub.Notify", False), (3, "Shop.Hub.Notify", True)]
    rb = symbols(
        "module Flags\n  def self.on?(name)\n    Store.new.fetch(name)\n  end\nend\n", "ruby"
    )
    assert defs(rb) == {("Flags", "module", 1, 5), ("Flags.on?", "method", 2, 4)}
    assert refs(rb, "Store") == [(3, "Flags.on?", True)]
    assert refs(rb, "fetch") == [(3, "Flags.on?", True)]
    php = symbols(
        "<?php\nclass Repo {\n  function find($id) {\n    return $this->db->query(Sql::select($id));"
        "\n  }\n}\n",
        "php",
    )
    assert defs(php) == {("Repo", "class", 2, 6), ("Repo.find", "method", 3, 5)}
    assert refs(php, "query") == [(4, "Repo.find", True)]
    assert refs(php, "select") == [(4, "Repo.find", True)]
    assert "this" not in names(php)


def test_every_chunk_symbol_is_a_definition():
    """The symbol table and the chunker agree on what the definitions are called."""
    small = ChunkBudget(
        max_lines=6, max_chars=10_000, min_chars=0, window_lines=6, window_overlap=1
    )
    checked = 0
    for path in sorted(FIXTURES.iterdir()):
        language = language_for(path.name)
        text = path.read_text(encoding="utf-8")
        spans, parsed = analyze_file(path.name, text, language or "text", budget=small)
        if parsed is None:
            continue
        found = {d.symbol for d in extract_parsed(parsed).definitions}
        for span in spans:
            if span.kind in ("block", "window", "section") or not span.symbol:
                continue
            for symbol in span.symbol.split(", "):
                assert symbol in found, (path.name, symbol)
                checked += 1
    assert checked > 60


def test_packed_form_round_trips():
    found = symbols(PYTHON, "python")
    packed = PackedSymbols.from_file_symbols(found)
    assert packed.to_file_symbols() == found
    assert packed.reference_count == len(found.references)
    assert packed.name_list() == sorted({r.name for r in found.references})


def test_caller_map_picks_the_innermost_definition():
    found = symbols(PYTHON, "python")
    callers = CallerMap(found.definitions)
    assert [callers.caller(line) for line in (1, 5, 9, 14, 16, 19, 21, 99)] == [
        "",
        "Session",
        "Session.send",
        "Session.close.drain",
        "Session.close",
        "",
        "helper",
        "",
    ]


def test_analyze_gives_the_chunker_spans_and_the_symbols():
    text = textwrap.dedent(PYTHON).lstrip("\n")
    spans, packed = analyze("session.py", text, "python")
    assert spans == analyze_file("session.py", text, "python")[0]
    assert packed.to_file_symbols() == symbols(PYTHON, "python")
    assert analyze("session.py", text, "python", symbols=False)[1] is EMPTY
    assert analyze("README.md", "# Title\n\ntext\n", "markdown")[1] is EMPTY


@pytest.mark.parametrize(
    "text",
    [
        "def broken(:\n    return )))\nclass\n",
        "\x00\x01 def \udcff weird(): pass\n",
        "def f():\n" + "    " * 300 + "return 1\n",
        "x = (" * 2000 + ")" * 2000 + "\n",
        "\r\n".join(f"def f{i}(): return g{i}()" for i in range(200)),
    ],
)
def test_odd_input_never_raises(text):
    found = extract_text("odd.py", text, "python").to_file_symbols()
    lines = len(text.splitlines())
    assert all(1 <= r.line <= lines for r in found.references)
    assert all(1 <= d.start_line <= d.end_line <= lines for d in found.definitions)


def test_line_numbers_follow_splitlines():
    text = "x = 1\n# page\x0c\ny = go()\n"  # a form feed ends a line for splitlines() only
    found = extract_text("odd.py", text, "python").to_file_symbols()
    assert text.splitlines()[3] == "y = go()"
    assert [(r.name, r.line, r.call) for r in found.references] == [("go", 4, True)]


def test_a_failing_step_keeps_what_was_found(monkeypatch, caplog):
    def broken(self, candidates):
        raise RuntimeError("grammar bug")

    monkeypatch.setattr(definitions_module.Definitions, "add_all", broken)
    with caplog.at_level(logging.WARNING):
        found = symbols(PYTHON, "python")
    assert found.definitions == ()
    assert refs(found, "Thing") == [(11, "", True)]
    assert "definitions of a python file stopped early" in caplog.text


def test_languages_without_a_grammar_have_no_symbols():
    assert extract_text("notes.txt", "def f(): pass\n", "text") is EMPTY
    assert extract_text("empty.py", "", "python") is EMPTY
    assert extract_text("blank.py", "\n\n  \n", "python") is EMPTY


def test_references_are_sorted_and_unique():
    found = symbols(PYTHON, "python")
    keys = [(r.line, r.name, r.call) for r in found.references]
    assert keys == sorted(set(keys))
    assert all(isinstance(r, Reference) for r in found.references)


def test_python_overload_declarations_give_way_to_the_implementation():
    found = symbols(
        """
        from typing import overload
        import typing

        class Box:
            @overload
            def get(self, key: int) -> int: ...
            @typing.overload
            def get(self, key: str) -> str: ...
            def get(self, key):
                return key

        @overload
        def only(x: int) -> int: ...
        @overload
        def only(x: str) -> str: ...
        """,
        "python",
    )
    assert defs(found) == {
        ("Box", "class", 4, 10),
        ("Box.get", "method", 9, 10),
        ("only", "function", 13, 13),  # a stub's declarations are all it has
        ("only", "function", 15, 15),
    }


def test_python_imports_renamed_or_reexported_from_another_package_are_aliases():
    found = symbols(
        """
        from click.utils import echo as echo
        from click.termui import style as style, secho
        from click.testing import CliRunner as Runner
        from .main import Typer as Typer
        from .main import run as start
        from os import path
        """,
        "python",
    )
    rows = {(a.name, a.target, a.module, a.start_line) for a in found.aliases}
    assert rows == {
        ("echo", "echo", "click.utils", 1),
        ("style", "style", "click.termui", 2),  # `secho`, imported bare, is no re-export
        ("Runner", "CliRunner", "click.testing", 3),
        ("start", "run", ".main", 5),  # `Typer as Typer` from the package is its definition
    }
