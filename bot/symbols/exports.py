"""Names a file binds without a definition of its own: re-exports, aliases, run-time members.

From the query's `@export` captures (statements at the top of a file or class, export
statements, `pub use`, member assignments of imported names) and `@loop` captures
(assignments to a computed member, `setattr` calls):

    exports.x = other.x                  alias x -> other.x (owner module.exports)
    module.exports = {a, b: impl}        alias a -> a, b -> impl (owner module.exports)
    module.exports = require('./lib')    alias * -> * from ./lib
    export {a as b} from './m'           alias b -> a from ./m;  export * from './m': *
    export default ky                    alias default -> ky
    const c = b.c / c = b.c (Python)     alias c -> b.c
    ky.stop = stop (stop imported)       alias stop -> stop (owner ky)
    from .x import a as b (Python)       alias b -> a from .x
    from y.z import a as a (Python)      alias a -> a from y.z
    pub use crate::de::Deserializer as D alias D -> Deserializer from crate::de (Rust)
    type A = B (Go, Rust)                alias A -> B
    get = make_wrapper('get')            assigned get -> make_wrapper('get')
    var ErrX = errors.New("x") (Go)      assigned ErrX -> errors.New("x")
    for (const m of requestMethods) ky[m] = ...     generated * from requestMethods (owner ky)
    ['get', 'post'].forEach(m => app[m] = ...)      generated get, post (owner app)
    for name in ("a", "b"): setattr(cls, name, f)   generated a, b (owner: the class)

Top-level lists of names (`const requestMethods = ['get', ...]`, `METHODS = ("get",)`)
and a Python module's `__all__` are recorded in the file's links (`Bindings.lists`), so
a loop over an imported list can be resolved when a question is asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.symbols.bindings import Bindings
from bot.symbols.imports import required, rust_uses
from bot.symbols.links import dotted
from bot.symbols.model import ALIAS, ASSIGNED, EVERY_NAME
from bot.symbols.packed import AliasRow
from bot.symbols.python_links import read_imports as read_python_imports
from bot.symbols.typenames import first_named, listed_names, text

_MAX_EXPRESSION = 80  # characters of an assigned expression kept
FUNCTIONS = frozenset(
    {"function", "function_expression", "arrow_function", "generator_function", "class"}
)
CHAINS = frozenset(
    {"identifier", "member_expression", "attribute", "selector_expression", "scoped_identifier"}
)
CALLS = frozenset({"call_expression", "call", "new_expression"})
_EXPORTS = ("module.exports", "exports")


@dataclass
class Found:
    """A file's aliases (rows for `PackedSymbols.aliases`)."""

    line_of: Callable[[int], int]
    rows: list[AliasRow] = field(default_factory=list)

    def add(
        self,
        name: str,
        kind: str,
        target: str,
        node: Node,
        *,
        module: str = "",
        owner: str = "",
        span: Node | None = None,
    ) -> None:
        """`name` bound at `node` (cited at `span`, the whole loop for a generated one)."""
        if not name or len(name.split()) != 1:
            return
        where = span or node
        first = self.line_of(where.start_byte)
        last = self.line_of(max(where.start_byte, where.end_byte - 1))
        self.rows.append((name, kind, " ".join(target.split()), module, owner, first, last))

    def distinct(self) -> list[AliasRow]:
        return list(dict.fromkeys(self.rows))


def expression(node: Node, src: bytes) -> str:
    raw = " ".join(text(node, src).split())
    return raw if len(raw) <= _MAX_EXPRESSION else raw[: _MAX_EXPRESSION - 1] + "…"


def dotted_chain(node: Node | None, src: bytes) -> str:
    return dotted(text(node, src)) if node is not None and node.type in CHAINS else ""


# -- JavaScript and TypeScript ------------------------------------------------------------------


def _js_value(found: Found, name: str, owner: str, value: Node, stmt: Node, src: bytes) -> None:
    """`name` (on `owner`) bound to `value` at `stmt`."""
    if value.type in FUNCTIONS:
        return  # a definition already (`bot.code.grammars.javascript`)
    module = required(value, src)
    if module is not None:
        found.add(name, ALIAS, module[1], stmt, module=module[0], owner=owner)
    elif value.type in CHAINS:
        found.add(name, ALIAS, dotted_chain(value, src), stmt, owner=owner)
    elif value.type in CALLS or value.type == "await_expression":
        found.add(name, ASSIGNED, expression(value, src), stmt, owner=owner)


def _js_assignment(found: Found, stmt: Node, bound: frozenset[str], src: bytes) -> None:
    expression = first_named(stmt) if stmt.type == "expression_statement" else stmt
    if expression is None or expression.type != "assignment_expression":
        return
    left, right = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    if left is None or right is None or left.type != "member_expression":
        return
    target = dotted_chain(left, src)
    owner, _, name = target.rpartition(".")
    if not owner:
        return
    if target == "module.exports":
        _module_exports(found, right, stmt, src)
        return
    exported = owner in _EXPORTS
    owner = owner.removesuffix(".prototype")
    if exported or (stmt.parent is not None and stmt.parent.type == "program"):
        _js_value(found, name, "module.exports" if exported else owner, right, stmt, src)
    elif right.type in CHAINS and dotted_chain(right, src).partition(".")[0] in bound:
        found.add(name, ALIAS, dotted_chain(right, src), stmt, owner=owner)  # `ky.stop = stop`


def _module_exports(found: Found, value: Node, stmt: Node, src: bytes) -> None:
    owner = "module.exports"
    if value.type == "object":
        for pair in value.named_children:
            if pair.type == "shorthand_property_identifier":
                found.add(text(pair, src), ALIAS, text(pair, src), pair, owner=owner)
            elif pair.type == "pair":
                key, item = pair.child_by_field_name("key"), pair.child_by_field_name("value")
                if key is not None and item is not None:
                    _js_value(found, text(key, src).strip("\"'"), owner, item, pair, src)
        return
    module = required(value, src)
    if module is not None and not module[1]:
        found.add(EVERY_NAME, ALIAS, EVERY_NAME, stmt, module=module[0], owner=owner)
    else:
        _js_value(found, "default", owner, value, stmt, src)


def _js_export(found: Found, stmt: Node, src: bytes, bindings: Bindings) -> None:
    module = text(stmt.child_by_field_name("source"), src).strip("\"'`")
    declaration = stmt.child_by_field_name("declaration")
    if declaration is not None:
        _js_declaration(found, declaration, src, bindings)
        return
    value = stmt.child_by_field_name("value")
    if value is not None:  # export default x
        _js_value(found, "default", "", value, stmt, src)
        return
    clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
    if clause is None:
        star = any(c.type == "*" for c in stmt.children)
        space = next((c for c in stmt.named_children if c.type == "namespace_export"), None)
        if space is not None and module:  # export * as ns from './m'
            found.add(text(first_named(space), src), ALIAS, "", stmt, module=module)
        elif star and module:
            found.add(EVERY_NAME, ALIAS, EVERY_NAME, stmt, module=module)
        return
    for spec in clause.named_children:
        name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
        if name is None or (alias is None and not module):
            continue  # `export {a}`: a is the file's own
        found.add(text(alias or name, src), ALIAS, text(name, src), spec, module=module)


def _js_declaration(found: Found, node: Node, src: bytes, bindings: Bindings) -> None:
    """`const a = b`, `const a = f()`, `const names = ['a', 'b']` at the top of a file."""
    if node.type not in ("lexical_declaration", "variable_declaration"):
        return
    for declarator in node.named_children:
        if declarator.type != "variable_declarator":
            continue
        name, value = (
            declarator.child_by_field_name("name"),
            declarator.child_by_field_name("value"),
        )
        if name is None or value is None or name.type != "identifier":
            continue
        listed = listed_names(value, src)
        if listed is not None:
            bindings.lists[text(name, src)] = (found.line_of(node.start_byte), listed)
        elif required(value, src) is None:  # `require` is an import
            _js_value(found, text(name, src), "", value, node, src)


def _js_exports(
    found: Found, node: Node, src: bytes, bound: frozenset[str], b: Bindings, _scope: str
) -> None:
    if node.type == "export_statement":
        _js_export(found, node, src, b)
    elif node.type in ("lexical_declaration", "variable_declaration"):
        _js_declaration(found, node, src, b)
    else:
        _js_assignment(found, node, bound, src)


# -- Python ----------------------------------------------------------------------------------


def _python_exports(
    found: Found, node: Node, src: bytes, bound: frozenset[str], b: Bindings, scope: str
) -> None:
    """Assignments at the top of a module or class (the query captures only those)."""
    assignment = first_named(node) if node.type == "expression_statement" else None
    if assignment is None or assignment.type != "assignment":
        return
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    if left is None or right is None or left.type != "identifier":
        return
    name = text(left, src)
    listed = listed_names(right, src)
    owner = b.class_of(scope)
    if listed is not None and not owner:
        if name == "__all__":
            b.exported = listed
        else:
            b.lists[name] = (found.line_of(node.start_byte), listed)
    elif right.type in ("identifier", "attribute"):
        found.add(name, ALIAS, dotted_chain(right, src), node, owner=owner)
    elif right.type == "call":
        found.add(name, ASSIGNED, expression(right, src), node, owner=owner)


def python_reexports(found: Found, statements: list[Node], src: bytes) -> None:
    """`from .x import a as b`: b re-exports a (a package's `__init__`, typically). From
    another package (`from click.utils import echo as echo`, the explicit re-export idiom,
    or `... import echo as say`) the row is kept also under the same name: it is the only
    place the index has for it, and says whose it is."""
    for statement in statements:
        raw = src[statement.start_byte : statement.end_byte]
        if not raw.startswith(b"from ") or b" as " not in raw:
            continue
        relative = raw.startswith(b"from .")
        for b in read_python_imports([statement], src):
            if not b.name or b.name == "*":
                continue
            if b.name != b.local or (not relative and _aliased(raw, b.name)):
                found.add(b.local, ALIAS, b.name, statement, module=b.module)


def _aliased(raw: bytes, name: str) -> bool:
    """Whether an import statement writes `name as name` (not a bare `name`)."""
    word = re.escape(name.encode())
    return re.search(rb"(?<![\w.])" + word + rb"\s+as\s+" + word + rb"(?!\w)", raw) is not None


# -- Rust and Go ----------------------------------------------------------------------------


def _rust_exports(
    found: Found, node: Node, src: bytes, _bound: frozenset[str], _b: Bindings, _scope: str
) -> None:
    if node.type == "use_declaration":
        if not any(c.type == "visibility_modifier" for c in node.children):
            return
        for local, module, name in rust_uses(node, src):
            found.add(local, ALIAS, name, node, module=module)
    elif node.type == "type_item":
        named, value = node.child_by_field_name("name"), node.child_by_field_name("type")
        if named is not None and value is not None:
            found.add(text(named, src), ALIAS, dotted(text(value, src).split("<")[0]), node)


def _ruby_exports(
    found: Found, node: Node, src: bytes, _bound: frozenset[str], b: Bindings, _scope: str
) -> None:
    """`VERBS = %w[get post]`: a constant listing names (what a loop may go over)."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    listed = listed_names(right, src)
    if left is not None and listed is not None:
        b.lists[text(left, src)] = (found.line_of(node.start_byte), listed)


def _go_exports(
    found: Found, node: Node, src: bytes, _bound: frozenset[str], _b: Bindings, _scope: str
) -> None:
    if node.type == "type_alias":
        name, value = node.child_by_field_name("name"), node.child_by_field_name("type")
        if name is not None and value is not None:
            found.add(text(name, src), ALIAS, dotted(text(value, src).split("[")[0]), node)
        return
    for spec in (c for c in node.named_children if c.type == "var_spec"):
        names = spec.children_by_field_name("name")
        value = spec.child_by_field_name("value")
        values = value.named_children if value is not None else []
        if len(names) != 1 or len(values) != 1:
            continue
        if values[0].type in ("identifier", "selector_expression"):
            found.add(text(names[0], src), ALIAS, dotted_chain(values[0], src), spec)
        elif values[0].type in ("call_expression", "composite_literal", "unary_expression"):
            found.add(text(names[0], src), ASSIGNED, expression(values[0], src), spec)


ExportReader = Callable[[Found, Node, bytes, frozenset[str], Bindings, str], None]
EXPORT_READERS: dict[str, ExportReader] = {
    "javascript": _js_exports,
    "typescript": _js_exports,
    "tsx": _js_exports,
    "python": _python_exports,
    "rust": _rust_exports,
    "go": _go_exports,
    "ruby": _ruby_exports,
}


def read_exports(
    language: str,
    nodes: list[Node],
    src: bytes,
    bound: frozenset[str],
    found: Found,
    b: Bindings,
    owner_of: Callable[[int], str],
) -> None:
    """The aliases of the captured statements (`@export`), and the lists they hold."""
    read = EXPORT_READERS.get(language)
    if read is None:
        return
    for node in sorted(nodes, key=lambda n: n.start_byte):
        read(found, node, src, bound, b, owner_of(node.start_byte))
