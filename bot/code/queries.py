"""What the symbol table looks for in a syntax tree: one tree-sitter query per language.

A query, run once over a file in C, captures:

- `@def`: nodes that may be definitions, which the chunker's grammar then
  decides on (`Grammar.definition`): the node types of its tables (`kinds`,
  `wrappers`) plus, per language, the shapes its `special` hook accepts
  (`const f = () => ...`, `typedef struct {...} t;`), written loosely: the
  grammar has the last word, so a pattern may only ever match more.
- `@call`: the name at a call site: the callee of `f(...)`, the member of
  `obj.f(...)`, the type of `new T(...)`, a Rust macro, a JSX element. Only
  the last segment of a dotted or member access is called (`self.send()`
  calls `send`).
- `@ref`: a name used, not called. Where a node is captured both ways the
  call wins.
- `@member` (Python): an attribute name; it is a call when `(` follows it
  (read from the source, and from the tree when only blanks, comments or a
  line break come between). One capture instead of two for most names.
- `@object`: a plain name before a member access (`Session.create`); kept
  only when it starts with an upper-case letter: a class, an enum, a
  constant namespace, not a variable.
Captures whose name starts with `_` are helpers.

Which names are references, per language. A variable or a parameter is
never one on its own: writing it (`text = ...`, `def f(text)`) or reading it
(`return text`) is not recorded. Such names are most of a file's identifiers,
cost most of the work, and would make a function `text` look used by every
file with a variable `text`. Recorded in every language: calls, member names
and imported names; outside Python also an upper-case object of a member
access. Per language:

- Python (one node type, `identifier`, for every name): calls, attribute
  names, names in `import` statements (every dotted segment), decorators,
  annotations (`x: Foo`, `-> list[Bar]`), base classes and keyword bases
  (`metaclass=Meta`), `except` clauses, `raise E`, and the class arguments of
  `isinstance`/`issubclass` (`type_checks`, read from the tree at those calls
  only: a query predicate costs more). An attribute's plain-name object is not recorded
  (`os.path`: `os` is its import; `text.split()`: a variable), upper-case or
  not: capturing every object costs a fifth of the work for a few references.
- JavaScript, TypeScript, TSX: calls, `new`, JSX elements, member names,
  imported and exported names, `extends` and `instanceof` operands, every
  TypeScript type name (`type_identifier`).
- Go: every type, field selector and package name, the operand of a selector
  (a package in `log.Println`; Go code names a package no other way, so a
  variable operand, `req.Header`, is kept too), keys of composite literals.
- Java, C, C++, Rust: every type name (`type_identifier`), C++ namespace, field
  access and path segment (`std::fmt`, `Foo::new`), annotations, imports and
  `use` lists, designated initialisers and struct-literal fields.
- C#: (one node type for every name) member names, names in type positions
  (`type:`, `returns:`, generic arguments, base lists), qualified names in
  `using`, attributes.
- Ruby: every constant (classes, modules), every method call.
- PHP: every `name` node: variables are a node type of their own (`$x`).

`stop` lists names that parse as names but are language words or built-in
literal names (`self`, Go's `nil` and predeclared types); references to them
carry no information and are not kept. A pattern naming a node type or field
that a grammar version does not have is left out of its query.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Query, QueryError

from bot.code.chunking.grammars import GRAMMARS
from bot.code.chunking.grammars import language as ts_language

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CallShape:
    """How a call is written: its node type and fields, the name and tuple node types."""

    node: str
    callee: str
    arguments: str
    name: str
    group: str


@dataclass(frozen=True, slots=True)
class ReferenceSpec:
    patterns: tuple[str, ...]  # each captures @call, @ref, @member or @object nodes
    stop: frozenset[str] = frozenset()
    # Whether the patterns may capture a definition's own name (`type Cache struct`),
    # which is then dropped; False only where no pattern can.
    own_names: bool = True
    call: CallShape | None = None  # needed for @member captures and type checks
    # Calls whose second argument names types (`isinstance(x, (A, B))`): plain references.
    type_checks: frozenset[str] = frozenset()


# {values}: the nodes a JavaScript name may be bound to and still be a definition.
_JS_VALUES = ("arrow_function", "function_expression", "function", "generator_function", "class")
_JS_DEFINITIONS = """
(export_statement) @def
(lexical_declaration (variable_declarator value: [{values}])) @def
(variable_declaration (variable_declarator value: [{values}])) @def
(field_definition value: [{values}]) @def
(public_field_definition value: [{values}]) @def
(expression_statement (assignment_expression right: [{values}])) @def
"""
# {values}: a C type specifier with a body, held in a declaration or typedef.
_C_VALUES = (
    "struct_specifier body: (_)",
    "union_specifier body: (_)",
    "enum_specifier body: (_)",
    "class_specifier body: (_)",
)
_C_DEFINITIONS = """
(type_definition type: [{values}]) @def
(declaration type: [{values}]) @def
(field_declaration type: [{values}]) @def
"""
# Definitions that `Grammar.special` recognises, beyond the grammar's tables.
_SPECIAL: dict[str, tuple[str, tuple[str, ...]]] = {
    "javascript": (_JS_DEFINITIONS, _JS_VALUES),
    "typescript": (_JS_DEFINITIONS, _JS_VALUES),
    "tsx": (_JS_DEFINITIONS, _JS_VALUES),
    "go": ("(type_declaration) @def\n(type_spec) @def", ()),
    "c": (_C_DEFINITIONS, _C_VALUES),
    "cpp": (_C_DEFINITIONS, _C_VALUES),
}

_PYTHON = (
    "(call function: (identifier) @call)",
    "(attribute attribute: (identifier) @member)",
    "(dotted_name (identifier) @ref)",  # imports
    "(decorator (identifier) @ref)",
    "(type (identifier) @ref)",
    "(generic_type (identifier) @ref)",
    "(class_definition superclasses: (argument_list (identifier) @ref))",
    "(class_definition superclasses: (argument_list (keyword_argument value: (identifier) @ref)))",
    "(except_clause value: [(identifier) @ref (tuple (identifier) @ref)"
    " (as_pattern . [(identifier) @ref (tuple (identifier) @ref)])])",
    "(raise_statement (identifier) @ref)",
)
_PYTHON_CALL = CallShape("call", "function", "arguments", "identifier", "tuple")

_JS_COMMON = (
    "(call_expression function: (identifier) @call)",
    "(call_expression function: (member_expression property: (property_identifier) @call))",
    "(call_expression function: (member_expression property: (private_property_identifier) @call))",
    "(new_expression constructor: (identifier) @call)",
    "(new_expression constructor: (member_expression property: (property_identifier) @call))",
    "(member_expression property: (property_identifier) @ref)",
    "(member_expression property: (private_property_identifier) @ref)",
    "(member_expression object: (identifier) @object)",
    '(binary_expression operator: "instanceof" right: (identifier) @ref)',
    "(import_specifier name: (identifier) @ref)",
    "(import_clause (identifier) @ref)",
    "(namespace_import (identifier) @ref)",
    "(export_specifier name: (identifier) @ref)",
    "(decorator (identifier) @ref)",
)
_JSX = (
    "(jsx_opening_element name: (identifier) @call)",
    "(jsx_self_closing_element name: (identifier) @call)",
    "(jsx_opening_element name: (member_expression property: (property_identifier) @call))",
    "(jsx_self_closing_element name: (member_expression property: (property_identifier) @call))",
)
# Base classes: JavaScript's grammar puts the name right in `class_heritage`, TypeScript's in an
# `extends_clause`. Each language gets only its own shape: a pattern a grammar cannot read
# would make the whole query fall back to compiling pattern by pattern (slow).
_JS_EXTENDS = ("(class_heritage (identifier) @ref)",)
_TS_EXTENDS = ("(extends_clause value: (identifier) @ref)",)
_TS_TYPES = ("(type_identifier) @ref", "(nested_type_identifier module: (identifier) @ref)")
_JS_STOP = frozenset({"undefined", "arguments", "NaN", "Infinity"})

_GO_PREDECLARED = frozenset(
    {
        *("nil", "true", "false", "iota", "any", "bool", "byte", "comparable", "error"),
        *("complex64", "complex128", "float32", "float64", "rune", "string", "uintptr"),
        *("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"),
    }
)
_GO = (
    "(call_expression function: (identifier) @call)",
    "(call_expression function: (selector_expression field: (field_identifier) @call))",
    "(selector_expression field: (field_identifier) @ref)",
    "(selector_expression operand: (identifier) @ref)",
    "(type_identifier) @ref",
    "(package_identifier) @ref",
    "(keyed_element . (literal_element (identifier) @ref))",
)

_JAVA = (
    "(method_invocation name: (identifier) @call)",
    "(object_creation_expression type: (type_identifier) @call)",
    "(object_creation_expression type: (generic_type (type_identifier) @call))",
    "(object_creation_expression type: (scoped_type_identifier (type_identifier) @call .))",
    "(object_creation_expression"
    " type: (generic_type (scoped_type_identifier (type_identifier) @call .)))",
    "(type_identifier) @ref",
    "(field_access field: (identifier) @ref)",
    "(field_access object: (identifier) @object)",
    "(method_invocation object: (identifier) @object)",
    "(marker_annotation name: (identifier) @ref)",
    "(annotation name: (identifier) @ref)",
    "(scoped_identifier name: (identifier) @ref)",
    "(method_reference (identifier) @ref .)",
    "(method_reference . (identifier) @object)",
)

_RUST = (
    "(call_expression function: (identifier) @call)",
    "(call_expression function: (field_expression field: (field_identifier) @call))",
    "(call_expression function: (scoped_identifier name: (identifier) @call))",
    "(call_expression function: (generic_function function: (identifier) @call))",
    "(call_expression function:"
    " (generic_function function: (field_expression field: (field_identifier) @call)))",
    "(call_expression function:"
    " (generic_function function: (scoped_identifier name: (identifier) @call)))",
    "(macro_invocation macro: (identifier) @call)",
    "(macro_invocation macro: (scoped_identifier name: (identifier) @call))",
    "(type_identifier) @ref",
    "(field_expression field: (field_identifier) @ref)",
    "(field_initializer field: (field_identifier) @ref)",
    "(scoped_identifier path: (identifier) @ref)",
    "(scoped_identifier name: (identifier) @ref)",
    "(scoped_type_identifier path: (identifier) @ref)",
    "(scoped_use_list path: (identifier) @ref)",
    "(use_list (identifier) @ref)",
    "(use_declaration argument: (identifier) @ref)",
    "(use_as_clause path: (identifier) @ref)",
)

_C = (
    "(call_expression function: (identifier) @call)",
    "(call_expression function: (field_expression field: (field_identifier) @call))",
    "(type_identifier) @ref",
    "(field_expression field: (field_identifier) @ref)",
    "(field_designator (field_identifier) @ref)",
)
_CPP = (
    *_C,
    "(call_expression function: (qualified_identifier name: (identifier) @call))",
    "(call_expression function: (template_function name: (identifier) @call))",
    "(call_expression function:"
    " (qualified_identifier name: (template_function name: (identifier) @call)))",
    "(new_expression type: (type_identifier) @call)",
    "(new_expression type: (qualified_identifier name: (type_identifier) @call))",
    "(namespace_identifier) @ref",
    "(qualified_identifier name: (identifier) @ref)",
    "(using_declaration (identifier) @ref)",
)

_CSHARP = (
    "(invocation_expression function: (identifier) @call)",
    "(invocation_expression function: (generic_name (identifier) @call))",
    "(invocation_expression function: (member_access_expression name: (identifier) @call))",
    "(invocation_expression"
    " function: (member_access_expression name: (generic_name (identifier) @call)))",
    "(object_creation_expression type: (identifier) @call)",
    "(object_creation_expression type: (generic_name (identifier) @call))",
    "(member_access_expression name: (identifier) @ref)",
    "(member_access_expression name: (generic_name (identifier) @ref))",
    "(member_access_expression expression: (identifier) @object)",
    "(_ type: (identifier) @ref)",
    "(_ returns: (identifier) @ref)",
    "(generic_name (identifier) @ref)",
    "(type_argument_list (identifier) @ref)",
    "(base_list (identifier) @ref)",
    "(qualified_name (identifier) @ref)",
    "(attribute name: (identifier) @ref)",
)

_RUBY = (
    "(call method: (identifier) @call)",
    "(call method: (constant) @call)",
    '(call receiver: (constant) @call method: (identifier) @_new (#eq? @_new "new"))',
    "(constant) @ref",
)

_PHP = (
    "(function_call_expression function: (name) @call)",
    "(function_call_expression function: (qualified_name (name) @call))",
    "(member_call_expression name: (name) @call)",
    "(nullsafe_member_call_expression name: (name) @call)",
    "(scoped_call_expression name: (name) @call)",
    "(object_creation_expression (name) @call)",
    "(object_creation_expression (qualified_name (name) @call))",
    "(name) @ref",
)

SPECS: dict[str, ReferenceSpec] = {
    "python": ReferenceSpec(
        _PYTHON,
        frozenset({"self", "cls"}),
        own_names=False,  # a def or class name is in none of its capture positions
        call=_PYTHON_CALL,
        type_checks=frozenset({"isinstance", "issubclass"}),
    ),
    "javascript": ReferenceSpec((*_JS_COMMON, *_JS_EXTENDS, *_JSX), _JS_STOP),
    "typescript": ReferenceSpec((*_JS_COMMON, *_TS_EXTENDS, *_TS_TYPES), _JS_STOP),
    "tsx": ReferenceSpec((*_JS_COMMON, *_TS_EXTENDS, *_JSX, *_TS_TYPES), _JS_STOP),
    "go": ReferenceSpec(_GO, _GO_PREDECLARED),
    "java": ReferenceSpec(_JAVA, frozenset({"var"})),
    "rust": ReferenceSpec(_RUST, frozenset({"Self", "None", "Some", "Ok", "Err"})),
    "c": ReferenceSpec(_C, frozenset({"NULL"})),
    "cpp": ReferenceSpec(_CPP, frozenset({"NULL"})),
    "csharp": ReferenceSpec(_CSHARP, frozenset({"var", "nameof"})),
    "ruby": ReferenceSpec(_RUBY),
    "php": ReferenceSpec(
        _PHP, frozenset({"this", "self", "parent", "static", "true", "false", "null"})
    ),
}


@cache
def symbol_query(language: str) -> Query:
    """The compiled query for one of SPECS' languages (KeyError otherwise)."""
    ts = ts_language(language)
    return build_query(ts, _definitions(language, ts), SPECS[language].patterns)


def build_query(ts: Language, definitions: str, patterns: Sequence[str]) -> Query:
    """One query of `definitions` and `patterns`, leaving out the patterns `ts` cannot read."""
    try:
        return Query(ts, "\n".join([definitions, *patterns]))
    except QueryError:  # an older or newer grammar: keep the patterns it understands
        kept = [p for p in patterns if _compiles(ts, p)]
        return Query(ts, "\n".join([definitions, *kept]))


def _compiles(ts: Language, pattern: str) -> bool:
    """Whether this grammar version knows every node type and field `pattern` names."""
    try:
        Query(ts, pattern)
    except QueryError:
        log.info("symbol pattern left out for this grammar version: %s", pattern)
        return False
    return True


def _definitions(language: str, ts: Language) -> str:
    grammar = GRAMMARS[language]
    types = [t for t in (*grammar.kinds, *grammar.wrappers) if _known(ts, t)]
    patterns = [f"[{' '.join(f'({t})' for t in types)}] @def"]
    template, values = _SPECIAL.get(language, ("", ()))
    known = " ".join(f"({v})" for v in values if _known(ts, v.split()[0]))
    for line in template.strip().splitlines():
        head = line.strip().lstrip("(").split(" ", 1)[0].rstrip(")")
        if _known(ts, head) and ("{values}" not in line or known):
            patterns.append(line.format(values=known))
    return "\n".join(patterns)


def _known(ts: Language, node_type: str) -> bool:
    return ts.id_for_node_kind(node_type, True) is not None
