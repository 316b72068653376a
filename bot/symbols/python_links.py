"""Python's imports and call receivers, read from the nodes its symbol query captured.

Imports (`@import`, every import statement of the file, at any depth: a guarded
or local import binds too) become `Binding`s. A called attribute's receiver is
classified from its `object` node (one node read per call, never a walk):

    self.send()  cls.send()       SELF
    super().send()                SUPER
    helpers.send(), a.b.send()    QUALIFIED when `helpers` / `a` is bound by an import or a
                                  top-level definition of the file; the chain is kept
    ", ".join(), str.join()       BUILTIN: a string literal, or a builtin type the file
                                  does not bind (the type is kept as the chain)
    anything else                 OTHER (an instance, a call's result, `self.a.send()`); the
                                  receiver is kept when it is a name or `self.x`, so the
                                  caller can type it (`bot.symbols.bindings`)
"""

from __future__ import annotations

import re

from tree_sitter import Node

from bot.code.lines import ENCODING
from bot.symbols.builtins import GLOBAL_OBJECTS, literal_type
from bot.symbols.links import Binding, dotted

# Form indexes (see `links.FORM_BITS`).
SELF_FORM, SUPER_FORM, QUALIFIED_FORM, OTHER_FORM, BUILTIN_FORM = 2, 3, 4, 5, 7
_RECEIVERS = frozenset({b"self", b"cls"})
_QUOTES = frozenset({b"'", b'"'})
_BUILTIN_TYPES = frozenset(name.encode() for name in GLOBAL_OBJECTS["python"])
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CLOSERS = frozenset({b")", b"]", b"'", b'"', b"}"})
_LOOKBACK = 80  # bytes read before a member for its receiver's name
# An ASCII name read backwards from just before the dot (non-ASCII names go to the tree).
_NAME_BEFORE = re.compile(rb"([A-Za-z0-9_]*[A-Za-z_])")


def read_imports(nodes: list[Node], src: bytes) -> list[Binding]:
    out: list[Binding] = []
    for node in nodes:
        if node.type == "import_statement":
            out.extend(_plain_import(node, src))
        elif node.type == "import_from_statement":
            out.extend(_from_import(node, src))
    return out


def _text(node: Node, src: bytes) -> str:
    return "".join(src[node.start_byte : node.end_byte].decode(ENCODING, "replace").split())


def _plain_import(node: Node, src: bytes) -> list[Binding]:
    """`import a.b.c` binds `a` (the chain then reaches a.b.c); `import x.y as z` binds z."""
    out = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            target, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            if target is not None and alias is not None:
                out.append(Binding(_text(alias, src), _text(target, src)))
        elif child.type == "dotted_name":
            module = _text(child, src)
            root = module.split(".")[0]
            out.append(Binding(root, root))
    return out


def _from_import(node: Node, src: bytes) -> list[Binding]:
    source = node.child_by_field_name("module_name")
    if source is None:
        return []
    module = _text(source, src)
    out = []
    for child in node.children:
        if child.type == "wildcard_import":
            out.append(Binding("*", module, "*"))
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            target, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            if target is not None and alias is not None:
                out.append(Binding(_text(alias, src), module, _text(target, src)))
        elif child.type == "dotted_name":
            name = _text(child, src)
            out.append(Binding(name, module, name))
    return out


def receiver(member: Node, src: bytes, bound: frozenset[bytes]) -> tuple[int, str]:
    """The form index of a called attribute's receiver, and its chain (QUALIFIED, BUILTIN
    and, when it is a name or `self.x`, OTHER).

    Read from the bytes before `.member` when the receiver is a plain name or ends in a
    bracket (most calls); from the tree for chains and anything spread over lines."""
    start = member.start_byte
    if src[start - 1 : start] == b".":
        before = src[start - 2 : start - 1]
        if before in _CLOSERS:
            if src[start - 8 : start] == b"super().":
                return SUPER_FORM, ""
            if before in _QUOTES:
                return BUILTIN_FORM, "str"
            if before == b")":  # a call's result, mostly: not worth a node
                return OTHER_FORM, ""
            return _from_tree(member, src, bound)  # `[...].index()` or `x[0].send()`
        name = _NAME_BEFORE.match(src[max(0, start - _LOOKBACK) : start - 1][::-1])
        if name is not None and name.end() < _LOOKBACK - 1:
            raw = name.group(1)[::-1]
            follows = src[start - 2 - len(raw) : start - 1 - len(raw)]
            if follows != b"." and not (follows and follows[0] in _NAME_BYTES):
                return _plain(raw, bound)
    return _from_tree(member, src, bound)


def _plain(raw: bytes, bound: frozenset[bytes]) -> tuple[int, str]:
    if raw in _RECEIVERS:
        return SELF_FORM, ""
    name = raw.decode(ENCODING, "replace")
    if raw in bound:
        return QUALIFIED_FORM, name
    if raw in _BUILTIN_TYPES:
        return BUILTIN_FORM, name
    return OTHER_FORM, name


def _from_tree(member: Node, src: bytes, bound: frozenset[bytes]) -> tuple[int, str]:
    obj = member.prev_named_sibling
    if obj is None:
        return OTHER_FORM, ""
    kind = obj.type
    if kind == "identifier":
        return _plain(src[obj.start_byte : obj.end_byte], bound)
    if kind == "call":
        if src[obj.start_byte : obj.start_byte + 6] == b"super(":
            return SUPER_FORM, ""
        return OTHER_FORM, ""
    literal = literal_type("python", kind)
    if literal:
        return BUILTIN_FORM, literal
    if kind == "attribute":
        raw = src[obj.start_byte : obj.end_byte]
        root = raw.partition(b".")[0].strip()
        if root not in bound:  # most chains: `self.x.f()`, which the caller may type
            return OTHER_FORM, dotted(raw.decode(ENCODING, "replace")) if root in _RECEIVERS else ""
        chain = dotted(raw.decode(ENCODING, "replace"))
        if chain:
            return QUALIFIED_FORM, chain
    return OTHER_FORM, ""
