"""Definitions the symbol table records that are not chunks of their own.

The chunker's grammars decide what a chunk is (`Grammar.definition`); a type alias,
a constant or a property is too small to be one, yet "where is X defined" and
"who calls X" must find it. The symbol query (`bot.code.queries`) captures these
shapes as `@def` too, and `declaration` names them when the grammar does not:

- TypeScript/JavaScript: `type X = ...` (type), an object literal bound to a name
  that holds functions (`const api = {get: () => ..., post() {}}`, `export default
  {...}`: object, its function members methods), a module-level `const` of a literal
  value (constant);
- Go: a defined type that is not a struct or interface (`type ID int`: type), each
  name of a module-level `const` block (constant) or `var` block (variable);
- Rust: `const` and `static` items (constant);
- Java: `static final` fields (constant);
- C#: properties, events and `const` fields; delegates (type);
- Ruby: `define_method(:name)` and `attr_reader/attr_writer/attr_accessor :name`
  (a method per name, captured on the symbol);
- PHP: class constants (constant).
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from bot.code.grammars.base import Definition, signature, text, wrapped

_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_LITERALS = frozenset(
    {
        "number",
        "string",
        "template_string",
        "array",
        "object",
        "true",
        "false",
        "regex",
        "unary_expression",
        "binary_expression",
    }
)
_JS_WRAPPERS = frozenset({"as_expression", "satisfies_expression", "parenthesized_expression"})
_MODULE_OBJECTS = frozenset({"module.exports", "exports"})
_OBJECT_DEPTH = 4  # nested object literals looked through for the name that holds them
_RUBY_DEFINERS = frozenset({"define_method", "attr_reader", "attr_writer", "attr_accessor"})

Reader = Callable[[Node, bytes], Definition | None]


def declaration(language: str, node: Node, src: bytes) -> Definition | None:
    """The definition `node` makes that its grammar leaves out, or None."""
    reader = _READERS.get(language)
    return reader(node, src) if reader is not None else None


def _plain(
    node: Node, name: Node | None, kind: str, src: bytes, *, outer: Node | None = None
) -> Definition | None:
    """A definition without a body spanning `outer` (else `node`), named by `name`."""
    named = text(name, src).strip()
    if not named:
        return None
    span = outer or node
    return Definition(span.start_byte, span.end_byte, kind, named, None, signature(span, None, src))


# TypeScript and JavaScript ----------------------------------------------------------------


def _script(node: Node, src: bytes) -> Definition | None:
    kind = node.type
    if kind == "type_alias_declaration":
        return _plain(node, node.child_by_field_name("name"), "type", src)
    if kind == "pair":
        return _pair(node, src)
    if kind in ("lexical_declaration", "variable_declaration"):
        return _declared(node, src)
    if kind == "expression_statement":
        return _assigned_object(node, src)
    if kind == "export_statement":
        inner = node.child_by_field_name("declaration")
        if inner is not None:
            found = _script(inner, src)
            return wrapped(node, found) if found is not None else None
        value = node.child_by_field_name("value")  # export default {...}
        if value is not None and _holds_functions(value):
            return Definition(
                node.start_byte,
                node.end_byte,
                "object",
                "default",
                value,
                signature(node, value, src),
            )
    return None


def _declared(node: Node, src: bytes) -> Definition | None:
    """`const api = {...functions}` (object) or a module-level `const X = <literal>`."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    name, value = (
        declarators[0].child_by_field_name("name"),
        _unwrapped(declarators[0].child_by_field_name("value")),
    )
    if name is None or name.type != "identifier" or value is None:
        return None
    if value.type in _FUNCTIONS:  # `export const create = ((s) => ...) as Create`
        body = value.child_by_field_name("body")
        return Definition(
            node.start_byte,
            node.end_byte,
            "function",
            text(name, src),
            body,
            signature(node, body, src),
        )
    if value.type == "object" and _holds_functions(value):
        return Definition(
            node.start_byte,
            node.end_byte,
            "object",
            text(name, src),
            value,
            signature(node, value, src),
        )
    module_level = node.parent is not None and node.parent.type in ("program", "export_statement")
    constant = node.type == "lexical_declaration" and text(node.child(0), src) == "const"
    if module_level and constant and value.type in _JS_LITERALS:
        return _plain(node, name, "constant", src)
    return None


def _assigned_object(node: Node, src: bytes) -> Definition | None:
    """`api.v2 = {get() {...}}`: an object named `api.v2`; a module's `module.exports = {...}`
    is not an object of its own (its members are the module's names)."""
    expression = node.named_child(0)
    if expression is None or expression.type != "assignment_expression":
        return None
    left, value = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    name = text(left, src)
    if value is None or name in _MODULE_OBJECTS or not _holds_functions(value):
        return None
    if left is None or left.type not in ("identifier", "member_expression"):
        return None
    return Definition(
        node.start_byte, node.end_byte, "object", name, value, signature(node, value, src)
    )


def _unwrapped(value: Node | None) -> Node | None:
    while value is not None and value.type in _JS_WRAPPERS:
        value = value.named_child(0)
    return value


def _holds_functions(value: Node) -> bool:
    return value.type == "object" and any(
        child.type == "method_definition" or (child.type == "pair" and _is_function(child))
        for child in value.named_children
    )


def _is_function(pair: Node) -> bool:
    value = _unwrapped(pair.child_by_field_name("value"))
    return value is not None and value.type in _FUNCTIONS


def _pair(node: Node, src: bytes) -> Definition | None:
    """`get: (...) => ...` or `nested: {...}` in an object literal that a name holds."""
    value = _unwrapped(node.child_by_field_name("value"))
    key = node.child_by_field_name("key")
    if value is None or key is None or key.type not in ("property_identifier", "string"):
        return None
    if not _named_object(node.parent):
        return None
    name = text(key, src).strip("'\"")
    if value.type in _FUNCTIONS:
        body = value.child_by_field_name("body")
        return Definition(
            node.start_byte, node.end_byte, "function", name, body, signature(node, body, src)
        )
    if value.type == "object" and _holds_functions(value):
        return Definition(
            node.start_byte, node.end_byte, "object", name, value, signature(node, value, src)
        )
    return None


def _named_object(obj: Node | None) -> bool:
    """Whether an object literal is bound to a name (`const x = {...}`, `export default
    {...}`, `x.y = {...}`), itself or through the pairs of named objects around it."""
    for _ in range(_OBJECT_DEPTH):
        if obj is None or obj.type != "object":
            return False
        holder = obj.parent
        while holder is not None and holder.type in _JS_WRAPPERS:
            holder = holder.parent
        if holder is None:
            return False
        if holder.type == "variable_declarator":
            return True
        if holder.type == "export_statement":
            return True
        if holder.type == "assignment_expression":
            left = holder.child_by_field_name("left")
            return left is not None and left.type in ("identifier", "member_expression")
        if holder.type != "pair":
            return False
        obj = holder.parent
    return False


# Go, Rust, Java, C#, Ruby, PHP -------------------------------------------------------------


def _go(node: Node, src: bytes) -> Definition | None:
    if node.type == "type_spec":
        value = node.child_by_field_name("type")
        if value is None or value.type in ("struct_type", "interface_type"):
            return None  # the grammar's own
        outer = (
            node.parent if node.parent is not None and node.parent.named_child_count == 1 else None
        )
        return _plain(node, node.child_by_field_name("name"), "type", src, outer=outer)
    if node.type in ("const_spec", "var_spec"):
        names = node.children_by_field_name("name")
        if len(names) != 1:
            return None
        block = node.parent
        outer = block if block is not None and block.type != "var_spec_list" else None
        if outer is not None and outer.named_child_count != 1:
            outer = None
        kind = "constant" if node.type == "const_spec" else "variable"
        return _plain(node, names[0], kind, src, outer=outer)
    return None


def _rust(node: Node, src: bytes) -> Definition | None:
    if node.type in ("const_item", "static_item"):
        return _plain(node, node.child_by_field_name("name"), "constant", src)
    return None


def _java(node: Node, src: bytes) -> Definition | None:
    if node.type != "field_declaration":
        return None
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    words = text(modifiers, src).split()
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if "static" not in words or "final" not in words or len(declarators) != 1:
        return None
    return _plain(node, declarators[0].child_by_field_name("name"), "constant", src)


def _csharp(node: Node, src: bytes) -> Definition | None:
    kind = node.type
    if kind == "property_declaration":
        return _plain(node, node.child_by_field_name("name"), "property", src)
    if kind == "delegate_declaration":
        return _plain(node, node.child_by_field_name("name"), "type", src)
    if kind in ("event_field_declaration", "field_declaration"):
        const = any(c.type == "modifier" and text(c, src) == "const" for c in node.children)
        if kind == "field_declaration" and not const:
            return None
        variables = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        declarators = [
            c
            for c in (variables.named_children if variables else [])
            if c.type == "variable_declarator"
        ]
        if len(declarators) != 1:
            return None
        name = declarators[0].child_by_field_name("name") or declarators[0].named_child(0)
        return _plain(node, name, "property" if kind.startswith("event") else "constant", src)
    return None


def _ruby(node: Node, src: bytes) -> Definition | None:
    """A `:name` passed to `define_method` or an `attr_*` call: a method named `name`."""
    if node.type != "simple_symbol":
        return None
    call = node.parent.parent if node.parent is not None else None
    if call is None or call.type != "call" or call.child_by_field_name("receiver") is not None:
        return None
    method = text(call.child_by_field_name("method"), src)
    if method not in _RUBY_DEFINERS:
        return None
    arguments = call.child_by_field_name("arguments")
    if method == "define_method" and (arguments is None or arguments.named_child(0) != node):
        return None  # only the first argument of define_method is a name
    name = text(node, src).lstrip(":")
    # `attr_accessor :a, :b` defines each on its own symbol; define_method spans its block
    span = call if method == "define_method" else node
    return Definition(
        span.start_byte, span.end_byte, "method", name, None, signature(call, None, src)
    )


def _php(node: Node, src: bytes) -> Definition | None:
    if node.type != "const_element":
        return None
    name = next((c for c in node.named_children if c.type == "name"), None)
    return _plain(node, name, "constant", src)


_READERS: dict[str, Reader] = {
    "typescript": _script,
    "tsx": _script,
    "javascript": _script,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "csharp": _csharp,
    "ruby": _ruby,
    "php": _php,
}
