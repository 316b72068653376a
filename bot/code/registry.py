"""The languages codecite parses with tree-sitter, each said once, in one record.

A `Language` holds every fact about one language that ingest, chunking and the
symbol table use: the file names that are written in it, the grammar wheel that
bundles its parser (nothing is downloaded), its chunk rules (`bot.code.grammars`),
and how its references are read. Its definition and reference query is a data
file beside it, `bot/code/queries/<name>.scm` (see `bot.code.queries`).

Adding a language: one `Language` entry in `LANGUAGES` (with a `Grammar` subclass
in `bot/code/grammars/` if no existing one fits), its `<name>.scm` query file,
and its wheel in pyproject's dependencies. `tests/bot/code/test_registry.py`
checks that the grammar loads, the query compiles and the names are its own.

File types that are indexed but not parsed (markdown, YAML, shell...) are
named in `bot.code.languages`, which answers `language_for(path)` for both.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.code.grammars import (
    CGrammar,
    CppGrammar,
    CSharpGrammar,
    GoGrammar,
    Grammar,
    JavaGrammar,
    JavaScriptGrammar,
    PhpGrammar,
    PythonGrammar,
    RubyGrammar,
    RustGrammar,
)

__all__ = [
    "LANGUAGES",
    "SYNTAX_LANGUAGES",
    "CallShape",
    "Language",
    "ReferenceRules",
    "registered",
]


@dataclass(frozen=True, slots=True)
class CallShape:
    """How a call is written: its node type and fields, the name and tuple node types."""

    node: str
    callee: str
    arguments: str
    name: str
    group: str


@dataclass(frozen=True, slots=True)
class ReferenceRules:
    """How the names its query captures become references (see `bot.symbols.references`)."""

    # Names that parse as names but are language words or built-in literals (`self`, `nil`).
    stop: frozenset[str] = frozenset()
    # Whether the query may capture a definition's own name (`type Cache struct`), which is
    # then dropped; False only where no pattern can.
    own_names: bool = True
    call: CallShape | None = None  # needed for @member captures and type checks
    # Calls whose second argument names types (`isinstance(x, (A, B))`): plain references.
    type_checks: frozenset[str] = frozenset()
    # Whether each site records how it was written (a bare name, a member of `self`, of an
    # imported name...) and the file its imports (`bot.symbols.links`); needs `call`.
    receivers: bool = False


@dataclass(frozen=True, slots=True)
class Language:
    """One tree-sitter language: its files, grammar wheel, chunk rules and reference rules."""

    name: str  # also the name of its query file, `queries/<name>.scm`
    extensions: tuple[str, ...]  # without the dot, matched case-insensitively
    wheel: str  # the module of its grammar wheel (`tree_sitter_python`)
    grammar: Grammar  # chunk rules: what a definition is (`bot.code.grammars`)
    loader: str = "language"  # the wheel's function returning the language pointer
    filenames: tuple[str, ...] = ()  # whole names, lower-case (`rakefile`)
    exact_extensions: tuple[str, ...] = ()  # case-sensitive (".C" is C++ by convention)
    references: ReferenceRules = ReferenceRules()

    @property
    def query_file(self) -> str:
        return f"{self.name}.scm"


_JS_STOP = frozenset({"undefined", "arguments", "NaN", "Infinity"})
_GO_PREDECLARED = frozenset(
    {
        *("nil", "true", "false", "iota", "any", "bool", "byte", "comparable", "error"),
        *("complex64", "complex128", "float32", "float64", "rune", "string", "uintptr"),
        *("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"),
    }
)
_C_STOP = frozenset({"NULL"})

LANGUAGES: tuple[Language, ...] = (
    Language(
        "python",
        ("py", "pyi", "pyw"),
        "tree_sitter_python",
        PythonGrammar(),
        references=ReferenceRules(
            frozenset({"self", "cls"}),
            own_names=False,  # a def or class name is in none of its capture positions
            call=CallShape("call", "function", "arguments", "identifier", "tuple"),
            type_checks=frozenset({"isinstance", "issubclass"}),
            receivers=True,
        ),
    ),
    Language(
        "javascript",
        ("js", "jsx", "mjs", "cjs"),
        "tree_sitter_javascript",
        JavaScriptGrammar(),
        references=ReferenceRules(_JS_STOP),
    ),
    Language(
        "typescript",
        ("ts", "mts", "cts"),
        "tree_sitter_typescript",
        JavaScriptGrammar(),
        loader="language_typescript",
        references=ReferenceRules(_JS_STOP),
    ),
    Language(
        "tsx",
        ("tsx",),
        "tree_sitter_typescript",
        JavaScriptGrammar(),
        loader="language_tsx",
        references=ReferenceRules(_JS_STOP),
    ),
    Language(
        "go",
        ("go",),
        "tree_sitter_go",
        GoGrammar(),
        references=ReferenceRules(_GO_PREDECLARED),
    ),
    Language(
        "java",
        ("java",),
        "tree_sitter_java",
        JavaGrammar(),
        references=ReferenceRules(frozenset({"var"})),
    ),
    Language(
        "rust",
        ("rs",),
        "tree_sitter_rust",
        RustGrammar(),
        references=ReferenceRules(frozenset({"Self", "None", "Some", "Ok", "Err"})),
    ),
    Language(
        "c",
        ("c", "h"),
        "tree_sitter_c",
        CGrammar(),
        references=ReferenceRules(_C_STOP),
    ),
    Language(
        "cpp",
        ("cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "tpp", "inl"),
        "tree_sitter_cpp",
        CppGrammar(),
        exact_extensions=("C", "H"),
        references=ReferenceRules(_C_STOP),
    ),
    Language(
        "csharp",
        ("cs",),
        "tree_sitter_c_sharp",
        CSharpGrammar(),
        references=ReferenceRules(frozenset({"var", "nameof"})),
    ),
    Language(
        "ruby",
        ("rb", "rake", "gemspec", "ru"),
        "tree_sitter_ruby",
        RubyGrammar(),
        filenames=("rakefile", "gemfile", "guardfile", "vagrantfile", "podfile", "brewfile"),
    ),
    Language(
        "php",
        ("php", "phtml"),
        "tree_sitter_php",
        PhpGrammar(),
        loader="language_php",
        references=ReferenceRules(
            frozenset({"this", "self", "parent", "static", "true", "false", "null"})
        ),
    ),
)

_BY_NAME: dict[str, Language] = {language.name: language for language in LANGUAGES}

SYNTAX_LANGUAGES = frozenset(_BY_NAME)


def registered(name: str) -> Language | None:
    """The record of a tree-sitter language by name, or None (markdown, yaml, "text"...)."""
    return _BY_NAME.get(name)
