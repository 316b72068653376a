"""The names imports bind, outside Python (whose own reader is `bot.symbols.python_links`).

Each captured import (`@import`) becomes `Binding`s (local name, module as written,
name imported; "" when the module itself is bound, "*" for every name):

    import x, {a as b} from './m'          x <- ./m default, b <- ./m a
    import * as ns from 'lodash'            ns <- lodash
    const other = require('./other')        other <- ./other
    const {p, q: r} = require('./pq')       p <- ./pq p, r <- ./pq q
    const y = require('./y').z              y <- ./y z
    import chi "github.com/go-chi/chi/v5"   chi <- github.com/go-chi/chi/v5
    import "net/http"                       http <- net/http
    use crate::de::{self, Deserializer as D};  de <- crate de, D <- crate::de Deserializer
    import com.google.gson.Gson;            Gson <- com.google.gson Gson
    import static a.B.c; import a.b.*;      c <- a.B c, * <- a.b *
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tree_sitter import Node

from bot.symbols.links import Binding, go_package
from bot.symbols.typenames import first_named, text


def _unquoted(node: Node | None, src: bytes) -> str:
    return text(node, src).strip("\"'`")


# -- JavaScript and TypeScript --------------------------------------------------------------


def _es_import(node: Node, src: bytes) -> list[Binding]:
    module = _unquoted(node.child_by_field_name("source"), src)
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    if not module or clause is None:
        return []
    out = []
    for part in clause.named_children:
        if part.type == "identifier":
            out.append(Binding(text(part, src), module, "default"))
        elif part.type == "namespace_import":
            name = next((c for c in part.named_children if c.type == "identifier"), None)
            if name is not None:
                out.append(Binding(text(name, src), module, ""))
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type != "import_specifier":
                    continue
                name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                imported = text(name, src).strip("\"'")
                out.append(Binding(text(alias or name, src), module, imported))
    return out


def required(value: Node | None, src: bytes) -> tuple[str, str] | None:
    """(module, member) of `require('./m')` ("" member) or `require('./m').x`; else None."""
    member = ""
    if value is not None and value.type == "member_expression":
        member = text(value.child_by_field_name("property"), src)
        value = value.child_by_field_name("object")
    if value is None or value.type != "call_expression":
        return None
    if text(value.child_by_field_name("function"), src) != "require":
        return None
    arguments = value.child_by_field_name("arguments")
    first = first_named(arguments) if arguments is not None else None
    if first is None or first.type != "string":
        return None
    return _unquoted(first, src), member


def _require(node: Node, src: bytes) -> list[Binding]:
    found = required(node.child_by_field_name("value"), src)
    name = node.child_by_field_name("name")
    if found is None or name is None:
        return []
    module, member = found
    if name.type == "identifier":
        return [Binding(text(name, src), module, member)]
    if name.type != "object_pattern" or member:
        return []
    out = []
    for part in name.named_children:
        if part.type == "shorthand_property_identifier_pattern":
            out.append(Binding(text(part, src), module, text(part, src)))
        elif part.type == "pair_pattern":
            key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
            if value is not None and value.type == "identifier":
                out.append(Binding(text(value, src), module, text(key, src)))
        elif part.type == "rest_pattern":  # `...rest`: the module's other names
            rest = first_named(part)
            if rest is not None and rest.type == "identifier":
                out.append(Binding(text(rest, src), module, ""))
    return out


# -- Go ----------------------------------------------------------------------------------------


def _go_import(node: Node, src: bytes) -> list[Binding]:
    path = _unquoted(node.child_by_field_name("path"), src)
    alias = text(node.child_by_field_name("name"), src)
    if not path or alias == "_":
        return []
    if alias == ".":
        return [Binding("*", path, "*")]
    return [Binding(alias or go_package(path), path, "")]


# -- Rust ---------------------------------------------------------------------------------------


def rust_uses(node: Node, src: bytes) -> list[tuple[str, str, str]]:
    """(local, module, name) of each item a `use` declaration brings in."""
    argument = node.child_by_field_name("argument")
    return list(_use_tree(argument, "", src)) if argument is not None else []


def _use_tree(node: Node, prefix: str, src: bytes) -> Iterator[tuple[str, str, str]]:
    kind = node.type
    if kind in ("identifier", "self", "crate", "super", "metavariable"):
        name = text(node, src)
        if kind == "self" and prefix:  # `use a::b::{self}` binds b
            module, _, last = prefix.rpartition("::")
            yield last, module, last
        elif kind != "self":
            yield name, prefix, name
    elif kind == "scoped_identifier":
        path = _joined(prefix, text(node.child_by_field_name("path"), src))
        name = text(node.child_by_field_name("name"), src)
        yield name, path, name
    elif kind == "use_as_clause":
        inner = node.child_by_field_name("path")
        alias = text(node.child_by_field_name("alias"), src)
        for _, module, name in _use_tree(inner, prefix, src) if inner is not None else ():
            yield alias, module, name
    elif kind == "use_wildcard":
        inner = first_named(node)
        yield "*", _joined(prefix, text(inner, src) if inner is not None else ""), "*"
    elif kind == "scoped_use_list":
        head = node.child_by_field_name("path")
        listed = node.child_by_field_name("list")
        inner_prefix = _joined(prefix, text(head, src) if head is not None else "")
        if listed is not None:
            yield from _use_tree(listed, inner_prefix, src)
    elif kind == "use_list":
        for child in node.named_children:
            yield from _use_tree(child, prefix, src)


def _joined(prefix: str, path: str) -> str:
    return f"{prefix}::{path}" if prefix and path else prefix or path


def _rust_import(node: Node, src: bytes) -> list[Binding]:
    return [Binding(local, module, name) for local, module, name in rust_uses(node, src)]


# -- Java -----------------------------------------------------------------------------------------


def _java_import(node: Node, src: bytes) -> list[Binding]:
    named = next((c for c in node.named_children if c.type in _JAVA_NAMES), None)
    if named is None:
        return []
    dotted = "".join(text(named, src).split())
    if any(c.type == "asterisk" for c in node.children):
        return [Binding("*", dotted, "*")]
    module, _, name = dotted.rpartition(".")
    return [Binding(name, module, name)] if module and name else []


_JAVA_NAMES = frozenset({"scoped_identifier", "identifier"})


Reader = Callable[[Node, bytes], list[Binding]]
READERS: dict[str, dict[str, Reader]] = {
    "javascript": {"import_statement": _es_import, "variable_declarator": _require},
    "go": {"import_spec": _go_import},
    "rust": {"use_declaration": _rust_import},
    "java": {"import_declaration": _java_import},
}
READERS["typescript"] = READERS["tsx"] = READERS["javascript"]


def read_imports(language: str, nodes: list[Node], src: bytes) -> list[Binding]:
    """The bindings of the captured import nodes, in document order."""
    readers = READERS.get(language, {})
    out: list[Binding] = []
    for node in sorted(nodes, key=lambda n: n.start_byte):
        read = readers.get(node.type)
        if read is not None:
            out.extend(read(node, src))
    return out
