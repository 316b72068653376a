"""The types a file states for its variables and fields, and what its functions return.

The symbol query captures declarations (`@bind`): parameters with a type, variables
declared with one or made by a constructor (`var r Router`, `m := NewMux()`, `n :=
&node{}`, `const q: Que = ...`, `let r = new Are()`, `Foo x = ...`, `let x = Foo::new()`,
`x: Foo = ...`, `x = Foo()`), fields (`tree *node` in a struct, `private x: Foo`,
`self.x = Cls()`, `self.x = x` after `x: Cls`). Each becomes a small type expression:

    Mux, http.Request       a type as written, dotted (`*Mux` and `Mux[K, V]` are Mux)
    NewMux(), pkg.New()     what that call returns (a class called, or a function whose
                            result the code states: `results`)
    Mux>tree                the type of field `tree` of Mux (`c.tree` where `c *Mux`)

Variables are kept per scope (the innermost definition holding the declaration, "" for
the module); a name given two different types in one scope is left untyped. Nothing
here looks at other files: the expressions are resolved when a question is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tree_sitter import Node

from bot.symbols.links import FIELD_OF, dotted
from bot.symbols.typenames import first_named, stated_type, text, value_type

_UNTYPED = ""  # a name given two types in one scope
_CLASS_LIKE = frozenset({"class", "struct", "interface", "trait", "impl", "enum"})
_RECEIVER_ROOTS = frozenset({"self", "this", "cls"})


class Bindings:
    """One file's stated types: variables by scope, fields by class, results by function."""

    def __init__(self, kinds: Mapping[str, str]) -> None:
        self._kinds = kinds  # definition symbol -> kind
        self.scopes: dict[str, dict[str, str]] = {}
        self.fields: dict[tuple[str, str], str] = {}
        self.results: dict[str, str] = {}
        self.lists: dict[str, tuple[int, tuple[str, ...]]] = {}  # name -> (line, names)
        self.exported: tuple[str, ...] | None = None  # a Python module's `__all__`
        self.names: set[str] = set()  # every variable some scope types

    def bind(self, scope: str, name: str, kind: str) -> None:
        if not name or not kind:
            return
        self.names.add(name)
        names = self.scopes.setdefault(scope, {})
        names[name] = kind if names.get(name, kind) == kind else _UNTYPED

    def may_type(self, chain: str) -> bool:
        """Whether `receiver_type` can type `chain` at all (cheap: no scope is looked up)."""
        root = chain.partition(".")[0]
        return root in self.names or (root in _RECEIVER_ROOTS and bool(self.fields))

    def field(self, owner: str, name: str, kind: str) -> None:
        if owner and name and kind:
            key = (owner, name)
            self.fields[key] = kind if self.fields.get(key, kind) == kind else _UNTYPED

    def variable(self, scope: str, name: str) -> str:
        """The type of `name` used in `scope`: its own declaration or an enclosing one's."""
        while True:
            found = self.scopes.get(scope, {}).get(name)
            if found is not None:
                return found
            if not scope:
                return ""
            scope = scope.rpartition(".")[0]

    def class_of(self, scope: str) -> str:
        """The class-like definition `scope` is (or is inside), "" if none."""
        while scope:
            if self._kinds.get(scope) in _CLASS_LIKE:
                return scope
            scope = scope.rpartition(".")[0]
        return ""

    def receiver_type(self, scope: str, chain: str) -> str:
        """The type expression of a receiver written `chain` (`c`, `c.tree`, `self.x`)."""
        root, *fields = chain.split(".")
        owner = self.class_of(scope) if root in _RECEIVER_ROOTS else ""
        if owner:  # `self.x`: a field this file states the type of
            if not fields or not self.fields.get((owner, fields[0])):
                return ""
            base = owner
        else:
            base = self.variable(scope, root)
            if not base:
                return ""
        return FIELD_OF.join([base, *fields]) if len(fields) < 4 else ""

    def facts(
        self,
    ) -> tuple[
        tuple[tuple[str, str, str], ...],
        tuple[tuple[str, str], ...],
        tuple[tuple[str, int, tuple[str, ...]], ...],
    ]:
        """(fields, results, lists) for `FileLinks`, in a stable order."""
        fields = tuple(sorted((o, n, k) for (o, n), k in self.fields.items() if k))
        results = tuple(sorted((s, k) for s, k in self.results.items() if k))
        lists = tuple(sorted((name, line, names) for name, (line, names) in self.lists.items()))
        return fields, results, lists


# -- declarations, by node type -----------------------------------------------------------------

# (node, src) -> (variable or field name, type expression, is a field) triples
Reader = Callable[[Node, bytes], list[tuple[str, str, bool]]]


def _named(name_field: str, type_field: str, value_field: str = "") -> Reader:
    def read(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
        name = node.child_by_field_name(name_field)
        if name is None or name.type not in _NAMES:
            return []
        kind = stated_type(text(node.child_by_field_name(type_field), src)) if type_field else ""
        if not kind and value_field:
            kind = value_type(node.child_by_field_name(value_field), src)
        return [(text(name, src), kind, False)] if kind else []

    return read


def _field(name_field: str, type_field: str, value_field: str = "") -> Reader:
    plain = _named(name_field, type_field, value_field)

    def read(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
        return [(name, kind, True) for name, kind, _ in plain(node, src)]

    return read


def _declarators(field: bool) -> Reader:
    """Java's `Foo a = ..., b;` and fields: one type, several declarators."""

    def read(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
        declared = stated_type(text(node.child_by_field_name("type"), src))
        out = []
        for d in node.children_by_field_name("declarator"):
            name = text(d.child_by_field_name("name"), src)
            kind = (
                declared if declared != "var" else value_type(d.child_by_field_name("value"), src)
            )
            if name and kind:
                out.append((name, kind, field))
        return out

    return read


def _short_var(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
    """Go's `m := NewMux()` (one name, one value)."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.named_child_count != 1:
        return []
    if right.named_child_count != 1:
        return []
    name = first_named(left)
    kind = value_type(first_named(right), src)
    return [(text(name, src), kind, False)] if name is not None and kind else []


def _typed_parameter(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
    """Python's `x: Foo` parameter (its name is its first identifier, no field)."""
    name = next((c for c in node.named_children if c.type == "identifier"), None)
    kind = stated_type(text(node.child_by_field_name("type"), src))
    return [(text(name, src), kind, False)] if name is not None and kind else []


def _python_assignment(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
    """`x: Foo = ...`, `x = Foo()`, `self.x = Foo()`, `self.x: Foo`, `self.x = x`."""
    left = node.child_by_field_name("left")
    if left is None:
        return []
    kind = stated_type(text(node.child_by_field_name("type"), src))
    right = node.child_by_field_name("right")
    if not kind and right is not None and right.type == "call":
        callee = dotted(text(right.child_by_field_name("function"), src))
        if callee and callee.rpartition(".")[2][:1].isupper():  # a class, by convention
            kind = f"{callee}()"
    if left.type == "identifier":
        return [(text(left, src), kind, False)] if kind else []
    if left.type != "attribute":
        return []
    owner, attribute = left.child_by_field_name("object"), left.child_by_field_name("attribute")
    if owner is None or attribute is None or text(owner, src) not in ("self", "cls"):
        return []
    if not kind and right is not None and right.type == "identifier":
        kind = "=" + text(right, src)  # the type of that variable, read in the same scope
    return [(text(attribute, src), kind, True)] if kind else []


def _this_assignment(node: Node, src: bytes) -> list[tuple[str, str, bool]]:
    """`this.x = new Foo()` (JavaScript, TypeScript)."""
    left = node.child_by_field_name("left")
    if left is None or left.type != "member_expression":
        return []
    if text(left.child_by_field_name("object"), src) != "this":
        return []
    kind = value_type(node.child_by_field_name("right"), src)
    name = text(left.child_by_field_name("property"), src)
    return [(name, kind, True)] if kind and name else []


_NAMES = frozenset({"identifier", "field_identifier", "property_identifier", "type_identifier"})

READERS: dict[str, dict[str, Reader]] = {
    "python": {
        "typed_parameter": _typed_parameter,
        "typed_default_parameter": _named("name", "type"),
        "assignment": _python_assignment,
    },
    "go": {
        "parameter_declaration": _named("name", "type"),
        "var_spec": _named("name", "type", "value"),
        "short_var_declaration": _short_var,
        "field_declaration": _field("name", "type"),
    },
    "javascript": {
        "variable_declarator": _named("name", "", "value"),
        "field_definition": _field("property", "", "value"),
        "assignment_expression": _this_assignment,
    },
    "typescript": {
        "required_parameter": _named("pattern", "type"),
        "optional_parameter": _named("pattern", "type"),
        "variable_declarator": _named("name", "type", "value"),
        "public_field_definition": _field("name", "type", "value"),
        "assignment_expression": _this_assignment,
    },
    "java": {
        "formal_parameter": _named("name", "type"),
        "local_variable_declaration": _declarators(field=False),
        "field_declaration": _declarators(field=True),
    },
    "rust": {
        "parameter": _named("pattern", "type"),
        "let_declaration": _named("pattern", "type", "value"),
        "field_declaration": _field("name", "type"),
    },
}
READERS["tsx"] = READERS["typescript"]
# TypeScript constructor parameters with an accessibility modifier are fields too.
_PARAMETER_PROPERTIES = frozenset({"required_parameter", "optional_parameter"})
_MODIFIERS = frozenset({"accessibility_modifier", "override_modifier", "readonly"})
_BARE_FIELDS = frozenset({"java"})  # languages whose methods use fields without `this.`

# Where a function's result type is written, by definition node type.
RESULT_FIELDS = {
    "function_definition": "return_type",  # Python
    "function_declaration": "result",  # Go; TypeScript's is `return_type` (tried second)
    "method_declaration": "result",  # Go; Java's is `type`
    "function_item": "return_type",  # Rust
    "method_definition": "return_type",  # TypeScript
}
_RESULT_FALLBACKS = ("return_type", "type")


def read_bindings(
    language: str,
    nodes: list[Node],
    src: bytes,
    owner_of: Callable[[int], str],
    into: Bindings,
) -> None:
    """Record the declarations among `nodes` (the query's `@bind` captures) in `into`."""
    readers = READERS.get(language)
    if not readers:
        return
    pending: list[tuple[str, str, str]] = []  # fields typed by a variable: (owner, name, var)
    for node in nodes:
        read = readers.get(node.type)
        if read is None:
            continue
        scope = owner_of(node.start_byte)
        for name, kind, is_field in read(node, src):
            if is_field:
                owner = into.class_of(scope)
                if kind.startswith("="):
                    pending.append((owner, name, f"{scope}\t{kind[1:]}"))
                else:
                    into.field(owner, name, kind)
                    if language in _BARE_FIELDS:  # a method names its class's fields bare
                        into.bind(owner, name, kind)
            else:
                into.bind(scope, name, kind)
                if node.type in _PARAMETER_PROPERTIES and _is_property(node):
                    into.field(into.class_of(scope), name, kind)
    for owner, name, where in pending:
        scope, _, variable = where.partition("\t")
        into.field(owner, name, into.variable(scope, variable))


def _is_property(node: Node) -> bool:
    return any(c.type in _MODIFIERS for c in node.children)


def read_results(
    language: str, nodes: list[Node], src: bytes, symbol_at: Callable[[int], str], into: Bindings
) -> None:
    """Each function's stated result type (`func NewMux() *Mux`, `-> Self` in `impl S`)."""
    if language not in READERS:
        return
    for node in nodes:
        field = RESULT_FIELDS.get(node.type)
        if field is None:
            continue
        result = node.child_by_field_name(field)
        for fallback in _RESULT_FALLBACKS:
            if result is not None:
                break
            result = node.child_by_field_name(fallback)
        if result is None:
            continue
        symbol = symbol_at(node.start_byte)
        if symbol.rpartition(".")[2] != text(node.child_by_field_name("name"), src):
            continue  # not a definition of its own (a method an interface declares)
        kind = stated_type(text(result, src))
        if kind == "Self" and language == "rust":
            kind = into.class_of(symbol.rpartition(".")[0])
        if symbol and kind:
            into.results[symbol] = kind
