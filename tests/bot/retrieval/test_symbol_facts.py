"""Which definitions a definition question names, on small symbol tables built by ingest's
extraction: a Go package named in the question, benchmarks beside the code, the kind the
question asks for, and a namespace a package's entry file exports."""

from __future__ import annotations

from bot.retrieval.symbol_facts import _definitions
from bot.retrieval.symbol_names import NameFinder
from bot.retrieval.symbol_questions import detect_symbol_question
from tests.support.webapp import symbol_table


def found(files: dict[str, str], question: str, repo: str = "proj") -> list[tuple[str, str]]:
    table = symbol_table(files, repo=repo)
    try:
        q = detect_symbol_question(question)
        assert q is not None
        defs, _, _ = _definitions(table, q, frozenset({repo}))
        if not defs:
            defs, _ = NameFinder(table, frozenset({repo})).through_namespace(q)
        return [(d.path, d.symbol) for d in defs]
    finally:
        table.close()


GO = {
    "errors.go": """
        package cli

        func Exit(message string, code int) error { return nil }
        """,
    "internal/run/run.go": """
        package run

        func Exit(code int) {}
        """,
}


def test_a_go_package_named_in_the_question_is_its_package_clause():
    assert found(GO, "where is cli.Exit defined?", repo="urfave-cli") == [("errors.go", "Exit")]
    assert found(GO, "where is run.Exit defined?") == [("internal/run/run.go", "Exit")]
    assert found(GO, "where is other.Exit defined?") == []


def test_benchmarks_come_after_the_code_and_the_asked_kind_first():
    files = {
        "bench/parse_bench.ts": "export function safeParse(input: unknown) { return input; }\n",
        "src/helpers.ts": "export function safeParse(input: unknown) { return input; }\n",
        "src/types.ts": """
            export class ZodType {
              safeParse(data: unknown) { return data; }
            }
            """,
    }
    assert found(files, "where is safeParse defined?")[-1] == ("bench/parse_bench.ts", "safeParse")
    assert found(files, "where is the safeParse method defined?")[0] == (
        "src/types.ts",
        "ZodType.safeParse",
    )


def test_a_namespace_exported_by_the_package_entry_is_followed():
    files = {
        "src/index.ts": """
            import * as z from './external.js';
            export { z };
            """,
        "src/external.ts": "export * from './schemas.js';\n",
        "src/schemas.ts": "export function string(params?: string) { return params; }\n",
        "src/tests/mocker.ts": "export class Mocker { get string() { return 'x'; } }\n",
    }
    assert found(files, "where is z.string defined?") == [("src/schemas.ts", "string")]
    assert found(files, "where is q.string defined?") == []


def test_of_several_definitions_the_one_the_package_entry_exports_comes_first():
    files = {
        "src/index.ts": "export * from './v4/schemas.js';\n",
        "src/v3/types.ts": "export class ZodString { parse() { return 1; } }\n",
        "src/v4/schemas.ts": "export class ZodString { check() { return 2; } }\n",
    }
    table = symbol_table(files, repo="zod")
    try:
        defs = table.definitions("ZodString", repos=None)
        assert [d.path for d in defs] == ["src/v3/types.ts", "src/v4/schemas.ts"]
        ordered = NameFinder(table, frozenset({"zod"})).exported_first(defs, "ZodString")
        assert [d.path for d in ordered] == ["src/v4/schemas.ts", "src/v3/types.ts"]
    finally:
        table.close()
