"""The symbol store: writes, scopes, lookups, ranking, files on disk."""

from __future__ import annotations

import sqlite3
import textwrap
import threading
from pathlib import Path

import pytest

from bot.errors import StoreError
from bot.store import open_store
from bot.store.symbols import schema
from bot.store.symbols.table import SymbolStore
from bot.symbols.extract import extract_text
from bot.symbols.model import Definition, FileSymbols, Reference, SymbolDef
from bot.symbols.packed import PackedSymbols

MODELS = """
class Session:
    def send(self, request):
        return self.adapter.send(request)

    def close(self):
        self.adapter.close()


class Adapter:
    def send(self, request):
        return transmit(request)

    def close(self):
        pass


def _private_helper():
    return Session()
"""

API = """
from shop.models import Session


def request(method, url):
    with Session() as session:
        return session.send(method, url)


def get(url):
    return request("GET", url)
"""

CLI = """
from shop.api import get
from shop.models import Session


def main():
    get("https://example.com")
    session = Session()
    session.close()
"""

TEST = """
from shop.models import Session


def test_send():
    assert Session().send("x")
"""


def packed(source: str) -> PackedSymbols:
    return extract_text("x.py", textwrap.dedent(source).lstrip("\n"), "python")


def shop_files() -> list[tuple[str, str, PackedSymbols]]:
    return [
        ("shop/models.py", "k1", packed(MODELS)),
        ("shop/api.py", "k1", packed(API)),
        ("shop/cli.py", "k1", packed(CLI)),
        ("tests/test_models.py", "k1", packed(TEST)),
    ]


@pytest.fixture(params=["sqlite", "postgres"])
def new_table(request: pytest.FixtureRequest, tmp_path: Path):
    """Fresh, empty symbol tables: SQLite in memory, or PostgreSQL (a database each)."""
    server = request.getfixturevalue("postgres_server") if request.param == "postgres" else None
    opened = []

    def factory():
        if server is None:
            table = SymbolStore.in_memory()
        else:
            stores = open_store(tmp_path / f"home{len(opened)}", database_url=server.new_database())
            table = stores.symbols
        opened.append(stores if server is not None else table)
        return table

    yield factory
    for part in opened:
        part.close()


@pytest.fixture
def store(new_table):
    s = new_table()
    s.apply("shop", shop_files())
    return s


def where(defs: list[SymbolDef]) -> list[tuple[str, str, int, int]]:
    return [(d.path, d.symbol, d.start_line, d.end_line) for d in defs]


def test_definitions_by_plain_and_qualified_name(store):
    assert where(store.definitions("send", repos=None)) == [
        ("shop/models.py", "Session.send", 2, 3),
        ("shop/models.py", "Adapter.send", 10, 11),
    ]
    assert where(store.definitions("Session.send", repos=None)) == [
        ("shop/models.py", "Session.send", 2, 3)
    ]
    assert where(store.definitions("models.Session", repos=None)) == [
        ("shop/models.py", "Session", 1, 6)
    ]
    assert where(store.definitions("shop.models.Adapter.close", repos=None)) == [
        ("shop/models.py", "Adapter.close", 13, 14)
    ]
    assert store.definitions("api.Session", repos=None) == []
    assert store.definitions("Other.send", repos=None) == []
    assert store.definitions("ession", repos=None) == []  # suffixes match at a dot only
    assert store.definitions("", repos=None) == []


def test_definitions_fall_back_to_any_case_only_when_nothing_matches(store):
    assert where(store.definitions("session", repos=None)) == [("shop/models.py", "Session", 1, 6)]
    assert where(store.definitions("SESSION.SEND", repos=None)) == [
        ("shop/models.py", "Session.send", 2, 3)
    ]
    store.apply("shop", [("shop/lower.py", "k1", packed("def session():\n    pass\n"))])
    assert where(store.definitions("session", repos=None)) == [("shop/lower.py", "session", 1, 2)]


def test_definitions_put_classes_and_functions_before_blocks(new_table):
    s = new_table()
    stack = FileSymbols(
        definitions=(
            Definition("Stack", "Stack", "impl", 1, 9),
            Definition("Stack", "Stack", "struct", 20, 22),
        )
    )
    s.apply("b", [("src/stack.rs", "k", stack)])
    s.apply("a", [("src/zz.rs", "k", FileSymbols((Definition("Stack", "Stack", "module", 1, 2),)))])
    found = s.definitions("Stack", repos=None)
    assert [(d.repo, d.kind, d.start_line) for d in found] == [
        ("b", "struct", 20),
        ("a", "module", 1),
        ("b", "impl", 1),
    ]
    assert len(s.definitions("Stack", repos=None, limit=2)) == 2
    assert s.definitions("Stack", repos=None, limit=0) == []


def test_references_calls_and_callers(store):
    sends = store.references("send", repos=None)
    assert [(r.path, r.line, r.caller, r.call) for r in sends] == [
        ("shop/api.py", 6, "request", True),
        ("shop/models.py", 3, "Session.send", True),
        ("tests/test_models.py", 5, "test_send", True),
    ]
    sessions = store.references("Session", repos=None)
    assert [(r.path, r.line, r.call) for r in sessions] == [
        ("shop/api.py", 1, False),
        ("shop/api.py", 5, True),
        ("shop/cli.py", 2, False),
        ("shop/cli.py", 7, True),
        ("shop/models.py", 18, True),
        ("tests/test_models.py", 1, False),
        ("tests/test_models.py", 5, True),
    ]
    calls = store.references("Session", repos=None, calls_only=True, limit=2)
    assert [(r.path, r.line) for r in calls] == [("shop/api.py", 5), ("shop/cli.py", 7)]
    assert store.references("models.Session", repos=None) == sessions  # by its last segment


def test_reference_counts(store):
    assert store.reference_count("Session", repos=None) == 7
    assert store.reference_count("Session", repos=None, calls_only=True) == 4
    # variables (`session = Session()`) are not references: no exact match, so any case
    assert store.reference_count("session", repos=None) == 7
    assert store.reference_count("close", repos=None) == 2  # member calls
    assert store.reference_count("CLOSE", repos=None) == 2
    assert store.reference_count("nothing", repos=None) == 0
    assert store.reference_count("Session", repos=frozenset()) == 0


def test_references_fall_back_to_any_case(store):
    found = store.references("SEND", repos=None)
    assert {r.name for r in found} == {"send"} and len(found) == 3
    assert store.references("transmit", repos=None)[0].caller == "Adapter.send"


def test_scopes_never_leak(new_table):
    s = new_table()
    s.apply("shop", shop_files())
    s.apply("other", [("lib/session.py", "k", packed("class Session:\n    pass\n\nSession()\n"))])
    only = frozenset({"other"})
    assert {d.repo for d in s.definitions("Session", repos=only)} == {"other"}
    assert {r.repo for r in s.references("Session", repos=only)} == {"other"}
    assert s.reference_count("Session", repos=only) == 1
    assert s.definitions("Session", repos=frozenset()) == []
    assert s.references("Session", repos=frozenset({"missing"})) == []
    assert {d.repo for d in s.definitions("Session", repos=None)} == {"shop", "other"}
    assert s.repos() == ["other", "shop"]
    assert s.stats("other") == (1, 1)


def test_apply_replaces_files_and_removes_paths(store):
    assert store.blobs("shop") == {
        "shop/models.py": "k1",
        "shop/api.py": "k1",
        "shop/cli.py": "k1",
        "tests/test_models.py": "k1",
    }
    new_api = packed("def request(method, url):\n    return dispatch(method, url)\n")
    store.apply("shop", [("shop/api.py", "k2", new_api)], removed=["shop/cli.py"])
    assert store.blobs("shop") == {
        "shop/models.py": "k1",
        "shop/api.py": "k2",
        "tests/test_models.py": "k1",
    }
    assert store.definitions("get", repos=None) == []
    assert store.definitions("main", repos=None) == []
    assert [r.path for r in store.references("Session", repos=None, calls_only=True)] == [
        "shop/models.py",
        "tests/test_models.py",
    ]
    assert [r.caller for r in store.references("dispatch", repos=None)] == ["request"]


def test_apply_accepts_plain_file_symbols_and_duplicates_keep_the_last(new_table):
    s = new_table()
    first = FileSymbols(
        (Definition("run", "Job.run", "method", 2, 4),),
        (Reference("start", 3, "Job.run", True), Reference("start", 9, "", False)),
    )
    s.apply("r", [("job.py", "a", PackedSymbols()), ("job.py", "b", first)])
    assert s.blobs("r") == {"job.py": "b"}
    assert [(r.line, r.caller, r.call) for r in s.references("start", repos=None)] == [
        (3, "Job.run", True),
        (9, "", False),
    ]
    assert s.stats() == (1, 2)


def test_remove_repo(store):
    store.apply("other", [("a.py", "k", packed("def send():\n    pass\n"))])
    store.remove_repo("shop")
    assert store.repos() == ["other"]
    assert store.blobs("shop") == {}
    assert [d.repo for d in store.definitions("send", repos=None)] == ["other"]
    assert store.references("Session", repos=None) == []
    assert store.top_symbols("shop") == []


def test_top_symbols_ranks_what_other_files_use(store):
    top = store.top_symbols("shop")
    first = top[0]
    assert (first.definition.symbol, first.referrers, first.score) == ("Session", 3, 3.0)
    ranked = [(r.definition.symbol, r.referrers) for r in top]
    # members count files naming their owner too: `session.send` in api.py, `Session().send` in
    # the test; Adapter's namesakes get nothing from files that never mention Adapter
    assert ("Session.send", 2) in ranked and ("Adapter.send", 0) in ranked
    assert ranked.index(("get", 1)) < ranked.index(("main", 0))
    # tests come after the code they test; private names after everything
    assert ranked[-2:] == [("test_send", 0), ("_private_helper", 0)]
    assert len(store.top_symbols("shop", limit=3)) == 3


def test_top_symbols_shares_a_name_among_its_definitions(new_table):
    # JavaScript imports are strings, so namesakes cannot be told apart: they share.
    def js(source: str) -> PackedSymbols:
        return extract_text("x.js", source, "javascript")

    s = new_table()
    files = [
        ("a/one.js", "k", js("function load() {}\n")),
        ("b/two.js", "k", js("function load() {}\n")),
        ("c/three.js", "k", js("function unique() {}\n")),
    ]
    files += [(f"use{i}.js", "k", js("load();\nload();\nunique();\n")) for i in range(3)]
    s.apply("r", files)
    scores = {(r.definition.path, r.definition.symbol): r.score for r in s.top_symbols("r")}
    assert scores == {("c/three.js", "unique"): 3.0, ("a/one.js", "load"): 1.5} | {
        ("b/two.js", "load"): 1.5
    }
    assert s.top_symbols("r")[0].definition.symbol == "unique"


def test_a_python_function_counts_only_files_that_name_its_module(new_table):
    s = new_table()
    files = [
        ("pkg/grammar.py", "k", packed("def text(node):\n    return node\n")),
        ("pkg/loader.py", "k", packed("def load():\n    pass\n")),
        ("pkg/user.py", "k", packed("from pkg.grammar import text\n\nprint(text(1))\n")),
    ]
    # three files use a variable called `text` and call load() from an imported loader
    files += [
        (f"pkg/v{i}.py", "k", packed("from pkg import loader\ntext = 'x'\nloader.load()\n"))
        for i in range(3)
    ]
    s.apply("r", files)
    referrers = {r.definition.symbol: r.referrers for r in s.top_symbols("r")}
    assert referrers["text"] == 1  # pkg/user.py only: the others never name `grammar`
    assert referrers["load"] == 3
    assert s.top_symbols("r")[0].definition.symbol == "load"


def test_top_symbols_cache_follows_writes_from_any_connection(tmp_path):
    path = tmp_path / "symbols.sqlite"
    reader, writer = SymbolStore(path), SymbolStore(path)
    writer.apply("r", [("a.py", "k", packed("def alpha():\n    pass\n"))])
    assert [r.definition.symbol for r in reader.top_symbols("r")] == ["alpha"]
    writer.apply("r", [("b.py", "k", packed("def beta():\n    pass\n\nalpha()\n"))])
    assert [r.definition.symbol for r in reader.top_symbols("r")] == ["alpha", "beta"]
    writer.remove_repo("r")
    assert reader.top_symbols("r") == []
    reader.close()
    writer.close()


def test_a_file_store_persists_and_reads_from_many_threads(tmp_path):
    path = tmp_path / "data" / "symbols.sqlite"
    s = SymbolStore(path)
    s.apply("shop", shop_files())
    s.close()
    again = SymbolStore(path)
    results: list[int] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                results.append(len(again.references("Session", repos=None)))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(10):  # writes while they read: each read sees one committed state
        again.apply("other", [(f"f{i}.py", "k", packed("Session()\n"))])
    for t in threads:
        t.join()
    assert not errors
    assert set(results) <= set(range(7, 18)) and len(results) == 80
    assert again.reference_count("Session", repos=frozenset({"other"})) == 10
    again.close()
    again.close()  # twice is fine
    with pytest.raises(StoreError):
        again.blobs("shop")


def test_a_damaged_file_is_set_aside(tmp_path):
    path = tmp_path / "symbols.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    s = SymbolStore(path)
    assert s.repos() == []
    s.apply("r", [("a.py", "k", packed("def alpha():\n    pass\n"))])
    assert [d.symbol for d in s.definitions("alpha", repos=None)] == ["alpha"]
    s.close()
    assert len(list(tmp_path.glob("symbols.sqlite.damaged-*"))) == 1


def test_another_schema_version_is_rebuilt(tmp_path):
    path = tmp_path / "symbols.sqlite"
    s = SymbolStore(path)
    s.apply("r", [("a.py", "k", packed("def alpha():\n    pass\n"))])
    s.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'schema'")
    s = SymbolStore(path)
    assert s.blobs("r") == {}  # the next ingest reads every file again
    s.apply("r", [("a.py", "k", packed("def alpha():\n    pass\n"))])
    assert s.stats() == (1, 0)
    s.close()


def test_an_unwritable_location_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError):
        SymbolStore(blocker / "symbols.sqlite")


def test_names_with_unusual_characters(store):
    odd = FileSymbols(
        (Definition("valid?", "Flags.valid?", "method", 1, 3),),
        (
            Reference("valid?", 5, "", True),
            Reference("$scope", 6, "", False),
            Reference("naïve", 7, "", False),
        ),
    )
    store.apply("rb", [("flags.rb", "k", odd)])
    assert [r.line for r in store.references("valid?", repos=None)] == [5]
    assert store.references("valid", repos=None) == []
    assert [r.line for r in store.references("$scope", repos=None)] == [6]
    assert [r.line for r in store.references("NAÏVE", repos=None)] == [7]
    assert store.references('"; DROP TABLE files; --', repos=None) == []
    assert store.references("***", repos=None) == []
    assert [d.symbol for d in store.definitions("Flags.valid?", repos=None)] == ["Flags.valid?"]


def test_schema_module_knows_its_tables(tmp_path):
    db = schema.open_file(tmp_path / "s.sqlite")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"files", "defs", "ref_names", "generations", "meta"} <= tables
    db.close()
    assert Path(tmp_path / "s.sqlite").exists()


_SCHEMA_3 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files (
    fid INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
    names TEXT NOT NULL, offsets BLOB NOT NULL, sites BLOB NOT NULL, UNIQUE (repo, path)
);
CREATE TABLE defs (
    fid INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, symbol TEXT NOT NULL,
    kind TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    PRIMARY KEY (fid, seq)
) WITHOUT ROWID;
CREATE INDEX defs_by_name ON defs (name COLLATE NOCASE);
CREATE VIRTUAL TABLE ref_names USING fts5 (
    names, content='files', content_rowid='fid', detail=none,
    tokenize="unicode61 remove_diacritics 0 tokenchars '_$?!@'"
);
CREATE TRIGGER files_added AFTER INSERT ON files BEGIN
    INSERT INTO ref_names (rowid, names) VALUES (new.fid, new.names);
END;
CREATE TRIGGER files_removed AFTER DELETE ON files BEGIN
    INSERT INTO ref_names (ref_names, rowid, names) VALUES ('delete', old.fid, old.names);
    DELETE FROM defs WHERE fid = old.fid;
END;
CREATE TABLE generations (repo TEXT PRIMARY KEY, generation INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE commits (repo TEXT PRIMARY KEY, commit_sha TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES ('schema', '3');
INSERT INTO files VALUES (1, 'api', 'a.py', '2|k', ' send ', x'0000000001000000', x'0b000000');
INSERT INTO defs VALUES (1, 0, 'run', 'run', 'function', 1, 9);
INSERT INTO commits VALUES ('api', 'c1');
"""


def test_a_schema_3_file_is_upgraded_in_place_and_keeps_answering(tmp_path):
    """The columns for forms and links are added to a file of the previous version; its
    rows answer by name (no forms) until the next ingest finds their keys stale."""
    path = tmp_path / "symbols.sqlite"
    old = sqlite3.connect(path)
    old.executescript(_SCHEMA_3)
    old.close()
    store = SymbolStore(path)
    try:
        assert store.commits() == {"api": "c1"}
        [site] = store.references("send", repos=None)
        assert (site.line, site.caller, site.call, site.form) == (5, "run", True, 0)
        assert store.file_facts("api", ["a.py"])["a.py"].links.imports == ()
        assert store.blobs("api") == {"a.py": "2|k"}  # not SYMBOLS_VERSION's: re-read next time
    finally:
        store.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
        schema.SCHEMA_VERSION,
    )
    db.close()
    again = SymbolStore(path)  # opening an upgraded file changes nothing
    assert again.commits() == {"api": "c1"}
    again.close()


INDEX_JS = """\
const other = require('./other')
exports.stringify = other.stringify
module.exports.Parser = require('./parser').Parser
for (const m of METHODS) { app[m] = function () {} }
"""


def test_aliases_by_name_and_with_their_file(new_table):
    table = new_table()
    table.apply("js", [("index.js", "k", extract_text("index.js", INDEX_JS, "javascript"))])
    [alias] = table.aliases("stringify", repos=None)
    assert (alias.repo, alias.path, alias.kind, alias.target, alias.owner) == (
        "js",
        "index.js",
        "alias",
        "other.stringify",
        "module.exports",
    )
    assert (alias.start_line, alias.end_line) == (2, 2)
    [parser] = table.aliases("parser", repos=frozenset({"js"}))  # any case, when none exactly
    assert (parser.name, parser.module, parser.target) == ("Parser", "./parser", "Parser")
    [made] = table.aliases("*", repos=None)  # members made for names the file cannot list
    assert (made.kind, made.target, made.owner, made.start_line) == (
        "generated",
        "METHODS",
        "app",
        4,
    )
    assert table.aliases("stringify", repos=frozenset({"other"})) == []
    facts = table.file_facts("js", ["index.js"])["index.js"]
    assert [a.name for a in facts.aliases] == ["stringify", "Parser", "*"]
    table.apply("js", [], removed=["index.js"])
    assert table.aliases("stringify", repos=None) == [] and table.aliases("*", repos=None) == []


def test_a_schema_4_file_is_upgraded_and_drops_aliases_with_their_file(tmp_path):
    """Version 5 adds the aliases table; the trigger removing a file's rows is replaced so
    that it removes its aliases too."""
    path = tmp_path / "symbols.sqlite"
    old = sqlite3.connect(path)
    old.executescript(_SCHEMA_3.replace("'3'", "'4'"))
    old.execute("ALTER TABLE files ADD COLUMN forms BLOB NOT NULL DEFAULT x''")
    old.execute("ALTER TABLE files ADD COLUMN links TEXT NOT NULL DEFAULT ''")
    old.commit()
    old.close()
    store = SymbolStore(path)
    try:
        assert [d.symbol for d in store.definitions("run", repos=None)] == ["run"]  # kept
        store.apply("js", [("index.js", "k", extract_text("index.js", INDEX_JS, "javascript"))])
        assert len(store.aliases("*", repos=None)) == 1
        store.remove_repo("js")
        assert store.aliases("*", repos=None) == []
    finally:
        store.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM aliases").fetchone() == (0,)
    db.close()
