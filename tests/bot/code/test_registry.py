"""The language registry: every record's grammar loads, its query compiles, its names are its own."""

from __future__ import annotations

import re
from collections import Counter
from importlib import resources

import pytest
from tree_sitter import Query

from bot.code.languages import SYNTAX_LANGUAGES, language_for
from bot.code.parsers import parser, ts_language
from bot.code.queries import query_text, symbol_query
from bot.code.registry import LANGUAGES, Language, registered

NAMES = [language.name for language in LANGUAGES]
CAPTURES = {
    *("def", "call", "ref", "member", "object", "base", "import"),
    *("bind", "export", "loop", "package"),
}


def by_name(name: str) -> Language:
    entry = registered(name)
    assert entry is not None
    return entry


def test_the_registry_is_the_syntax_languages() -> None:
    assert len(NAMES) == len(set(NAMES)) == 12
    assert set(NAMES) == SYNTAX_LANGUAGES
    assert registered("markdown") is None and registered("text") is None


@pytest.mark.parametrize("name", NAMES)
def test_the_grammar_wheel_loads_and_parses(name: str) -> None:
    assert ts_language(name).abi_version >= 13
    tree = parser(name).parse(b"x\n")
    assert tree.root_node.end_byte == 2


@pytest.mark.parametrize("name", NAMES)
def test_the_query_file_is_packaged_and_compiles_in_one_piece(name: str) -> None:
    entry = by_name(name)
    assert resources.files("bot.code.queries").joinpath(entry.query_file).is_file()
    text = query_text(name)
    query = Query(ts_language(name), text)  # no pattern left out for the installed wheel
    assert query.pattern_count == len(text.splitlines()) > 1
    captures = {query.capture_name(i) for i in range(query.capture_count)}
    assert {"def", "call", "ref"} <= captures
    assert {c for c in captures if not c.startswith("_")} <= CAPTURES
    assert symbol_query(name).pattern_count == query.pattern_count


@pytest.mark.parametrize("name", NAMES)
def test_each_query_line_is_one_pattern_that_compiles_alone(name: str) -> None:
    """The fallback for other grammar versions drops unreadable lines, so each must stand alone."""
    ts = ts_language(name)
    for line in query_text(name).splitlines():
        assert Query(ts, line).pattern_count == 1, line


@pytest.mark.parametrize("name", NAMES)
def test_the_query_captures_every_definition_type_of_the_chunk_rules(name: str) -> None:
    entry = by_name(name)
    ts = ts_language(name)
    first = query_text(name).splitlines()[0]
    listed = re.fullmatch(r"\[((?:\s*\(\w+\))+)\s*\]\s*@def", first)
    assert listed is not None, first
    types = set(re.findall(r"\((\w+)\)", listed[1]))
    rules = {*entry.grammar.kinds, *entry.grammar.wrappers}
    assert types == {t for t in rules if ts.id_for_node_kind(t, True) is not None}


def test_every_query_file_belongs_to_a_registered_language() -> None:
    files = {
        f.name for f in resources.files("bot.code.queries").iterdir() if f.name.endswith(".scm")
    }
    assert files == {by_name(name).query_file for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_a_language_owns_its_file_names(name: str) -> None:
    entry = by_name(name)
    assert entry.extensions
    for ext in entry.extensions:
        assert ext == ext.lower()
        assert language_for(f"src/x.{ext}") == name
        assert language_for(f"src/x.{ext.upper()}") in (name, *SYNTAX_LANGUAGES)
    for ext in entry.exact_extensions:
        assert language_for(f"src/x.{ext}") == name
    for filename in entry.filenames:
        assert language_for(f"a/{filename}") == name
        assert language_for(f"a/{filename.capitalize()}") == name


def test_no_file_name_is_claimed_twice() -> None:
    claims = Counter(
        (kind, claim)
        for entry in LANGUAGES
        for kind, claims in (
            ("ext", entry.extensions),
            ("exact", entry.exact_extensions),
            ("name", entry.filenames),
        )
        for claim in claims
    )
    assert [claim for claim, count in claims.items() if count > 1] == []


def test_an_unregistered_language_has_no_grammar_nor_query() -> None:
    with pytest.raises(KeyError):
        ts_language("markdown")
    with pytest.raises(KeyError):
        query_text("yaml")
