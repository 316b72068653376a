"""What the symbol table looks for in a syntax tree: one tree-sitter query per language.

A query, run once over a file in C, captures:

- `@def`: nodes that may be definitions, which the chunker's grammar then
  decides on (`Grammar.definition`): the node types of its tables (`kinds`,
  `wrappers`) plus, per language, the shapes its `special` hook accepts
  (`const f = () => ...`, `typedef struct {...} t;`), written loosely: the
  grammar has the last word, so a pattern may only ever match more.
- `@ref`: every identifier-like node, and again as `@call` the name at a call
  site: the callee of `f(...)`, the member of `obj.f(...)`, the type of
  `new T(...)`, a Rust macro, a JSX element. Only the last segment of a dotted
  or member access is a call (`self.send()` calls `send`); every segment is
  still a reference. Captures whose name starts with `_` are helpers.

`stop` lists names that parse as identifiers but are language words or
built-in literal names (`self`, Go's `nil` and predeclared types); references
to them carry no information and are not kept. Node types a grammar version
does not have are left out of its query.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Query

from bot.ingest.chunking.grammars import GRAMMARS
from bot.ingest.chunking.grammars import language as ts_language


@dataclass(frozen=True, slots=True)
class ReferenceSpec:
    refs: tuple[str, ...]  # node types that are names
    calls: str  # query patterns capturing callee names as @call
    stop: frozenset[str] = frozenset()

    def source(self) -> str:
        alternatives = " ".join(f"({t})" for t in self.refs)
        return f"[{alternatives}] @ref\n{self.calls}"


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


_C_CALLS = """
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
"""

_JS_CALLS = """
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (property_identifier) @call))
"""

_JSX_CALLS = """
(jsx_opening_element name: (identifier) @call)
(jsx_self_closing_element name: (identifier) @call)
"""

_JS_REFS = (
    "identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
    "private_property_identifier",
)
_JS_STOP = frozenset({"undefined", "arguments", "NaN", "Infinity"})

_GO_PREDECLARED = frozenset(
    {
        "nil",
        "true",
        "false",
        "iota",
        "any",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
    }
)

SPECS: dict[str, ReferenceSpec] = {
    "python": ReferenceSpec(
        ("identifier",),
        """
        (call function: (identifier) @call)
        (call function: (attribute attribute: (identifier) @call))
        """,
        frozenset({"self", "cls"}),
    ),
    "javascript": ReferenceSpec(_JS_REFS, _JS_CALLS + _JSX_CALLS, _JS_STOP),
    "typescript": ReferenceSpec((*_JS_REFS, "type_identifier"), _JS_CALLS, _JS_STOP),
    "tsx": ReferenceSpec((*_JS_REFS, "type_identifier"), _JS_CALLS + _JSX_CALLS, _JS_STOP),
    "go": ReferenceSpec(
        ("identifier", "field_identifier", "type_identifier", "package_identifier"),
        """
        (call_expression function: (identifier) @call)
        (call_expression function: (selector_expression field: (field_identifier) @call))
        """,
        _GO_PREDECLARED,
    ),
    "java": ReferenceSpec(
        ("identifier", "type_identifier"),
        """
        (method_invocation name: (identifier) @call)
        (object_creation_expression type: (type_identifier) @call)
        (object_creation_expression type: (generic_type (type_identifier) @call))
        """,
    ),
    "rust": ReferenceSpec(
        ("identifier", "field_identifier", "type_identifier"),
        """
        (call_expression function: (identifier) @call)
        (call_expression function: (field_expression field: (field_identifier) @call))
        (call_expression function: (scoped_identifier name: (identifier) @call))
        (call_expression function: (generic_function function: (identifier) @call))
        (macro_invocation macro: (identifier) @call)
        """,
        frozenset({"Self", "None", "Some", "Ok", "Err"}),
    ),
    "c": ReferenceSpec(
        ("identifier", "field_identifier", "type_identifier"),
        _C_CALLS,
        frozenset({"NULL"}),
    ),
    "cpp": ReferenceSpec(
        ("identifier", "field_identifier", "type_identifier", "namespace_identifier"),
        _C_CALLS
        + """
        (call_expression function: (qualified_identifier name: (identifier) @call))
        (call_expression function: (template_function name: (identifier) @call))
        (new_expression type: (type_identifier) @call)
        """,
        frozenset({"NULL"}),
    ),
    "csharp": ReferenceSpec(
        ("identifier",),
        """
        (invocation_expression function: (identifier) @call)
        (invocation_expression function: (generic_name (identifier) @call))
        (invocation_expression function: (member_access_expression name: (identifier) @call))
        (invocation_expression
          function: (member_access_expression name: (generic_name (identifier) @call)))
        (object_creation_expression type: (identifier) @call)
        (object_creation_expression type: (generic_name (identifier) @call))
        """,
        frozenset({"var", "nameof"}),
    ),
    "ruby": ReferenceSpec(
        ("identifier", "constant"),
        """
        (call method: (identifier) @call)
        (call method: (constant) @call)
        (call receiver: (constant) @call method: (identifier) @_new (#eq? @_new "new"))
        """,
    ),
    "php": ReferenceSpec(
        ("name",),
        """
        (function_call_expression function: (name) @call)
        (function_call_expression function: (qualified_name (name) @call))
        (member_call_expression name: (name) @call)
        (nullsafe_member_call_expression name: (name) @call)
        (scoped_call_expression name: (name) @call)
        (object_creation_expression (name) @call)
        (object_creation_expression (qualified_name (name) @call))
        """,
        frozenset({"this", "self", "parent", "static", "true", "false", "null"}),
    ),
}


@cache
def symbol_query(language: str) -> Query:
    """The compiled query for one of SPECS' languages (KeyError otherwise)."""
    ts = ts_language(language)
    return Query(ts, f"{_definitions(language, ts)}\n{SPECS[language].source()}")


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
