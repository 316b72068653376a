"""How a call was written, in the languages whose calls go through member accesses.

For each callee the query captured (`@call`), the node around it says whether it is
called on something (`obj.send()`, `c.Next()`, `Foo::new()`, `this.m()`) and on what.
The receiver is classified the way Python's are (`bot.symbols.python_links`), with
two more forms (`bot.symbols.links`):

    send(), new Send()                  BARE
    this.send(), self.send()            SELF (Rust's `Self::new()` too)
    super.send()                        SUPER
    other.send(), Foo.create()          QUALIFIED: `other`/`Foo` is imported or defined at
                                        the top of the file, or (Java, TypeScript, Rust) a
                                        capitalised name: a class, found by name later
    c.send() where `c *Client`          TYPED: a variable (or `this.x`, `c.tree`) whose
                                        type the code states (`bot.symbols.bindings`)
    JSON.stringify(), "a".concat()      BUILTIN: a global object of the language or a literal
    anything else                       OTHER

The chain of a QUALIFIED or BUILTIN receiver and the type of a TYPED one are kept, so a
question can be answered about the one definition they reach.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from bot.code.lines import ENCODING
from bot.symbols.bindings import Bindings
from bot.symbols.builtins import GLOBAL_OBJECTS, literal_type

# Form indexes (see `links.FORM_BITS`).
BARE_FORM, SELF_FORM, SUPER_FORM, QUALIFIED_FORM, OTHER_FORM, TYPED_FORM, BUILTIN_FORM = range(1, 8)
_MAX_CHAIN = 4  # segments of a receiver followed (`a.b.c.d.send()`)


@dataclass(frozen=True, slots=True)
class MemberShape:
    """A node type that reads a member of something, and its two fields."""

    node: str
    receiver: str
    member: str
    reads: bool = True  # a field read (`a.b`); False: a call (Java's `a.b()`), no receiver chain


_JS = (MemberShape("member_expression", "object", "property"),)
SHAPES: dict[str, tuple[MemberShape, ...]] = {
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "go": (MemberShape("selector_expression", "operand", "field"),),
    "java": (
        MemberShape("method_invocation", "object", "name", reads=False),
        MemberShape("field_access", "object", "field"),
    ),
    "rust": (
        MemberShape("field_expression", "value", "field"),
        MemberShape("scoped_identifier", "path", "name"),
    ),
}
_SELF = frozenset({"this", "self", "Self"})
_SUPER = frozenset({"super"})
_NAMES = frozenset({"identifier", "type_identifier", "package_identifier", "crate"})
# Languages whose capitalised names are types, which a call may name without an import.
_TYPES_BY_NAME = frozenset({"java", "typescript", "tsx", "javascript", "rust"})


@dataclass(frozen=True, slots=True)
class Written:
    """How one call was written: its form index and, by form, its receiver and type."""

    form: int
    chain: str = ""  # the receiver as written (QUALIFIED, BUILTIN, TYPED)
    kind: str = ""  # the receiver's type expression (TYPED)


_BARE = Written(BARE_FORM)


class ReceiverReader:
    """Classifies the callees of one file (see the module docstring)."""

    def __init__(
        self,
        language: str,
        src: bytes,
        bound: frozenset[str],
        bindings: Bindings,
        owner_of: Callable[[int], str],
    ) -> None:
        self._language = language
        self._shapes = {s.node: s for s in SHAPES.get(language, ())}
        self._src = src
        self._bound = bound
        self._bindings = bindings
        self._owner_of = owner_of
        self._globals = GLOBAL_OBJECTS.get(language, frozenset())

    @property
    def enabled(self) -> bool:
        return bool(self._shapes)

    def classify(self, callee: Node) -> Written:
        parent = callee.parent
        shape = self._shapes.get(parent.type) if parent is not None else None
        if shape is None or parent is None:
            return _BARE
        member = parent.child_by_field_name(shape.member)
        if member is None or member.start_byte != callee.start_byte:
            return _BARE
        receiver = parent.child_by_field_name(shape.receiver)
        if receiver is None:
            return _BARE  # Java's `send(...)` is a method_invocation without an object
        return self._receiver(receiver, callee.start_byte)

    def _receiver(self, node: Node, at: int) -> Written:
        kind = node.type
        if kind in _SELF or (kind in _NAMES and self._text(node) in _SELF):
            return Written(SELF_FORM)
        if kind in _SUPER:
            return Written(SUPER_FORM)
        literal = literal_type(self._language, kind)
        if literal:
            return Written(BUILTIN_FORM, literal)
        chain = self._chain(node, 0)
        if not chain:
            return Written(OTHER_FORM)
        root = chain.partition(".")[0]
        typed = ""
        if self._bindings.may_type(chain):
            typed = self._bindings.receiver_type(self._owner_of(at), chain)
        if root in _SELF:
            return Written(TYPED_FORM, chain, typed) if typed else Written(OTHER_FORM)
        if root in self._bound or root in ("crate", "super"):
            return Written(QUALIFIED_FORM, chain)
        if typed:
            return Written(TYPED_FORM, chain, typed)
        if root in self._globals:
            return Written(BUILTIN_FORM, chain)
        if root[:1].isupper() and self._language in _TYPES_BY_NAME:
            return Written(QUALIFIED_FORM, chain)
        return Written(OTHER_FORM)

    def _chain(self, node: Node, depth: int) -> str:
        """A receiver of names and member accesses only, dotted (`a.b.c`); "" otherwise."""
        if node.type in _NAMES or node.type in _SELF:
            return self._text(node)
        shape = self._shapes.get(node.type)
        if shape is None or not shape.reads or depth >= _MAX_CHAIN:
            return ""
        inner = node.child_by_field_name(shape.receiver)
        member = node.child_by_field_name(shape.member)
        if inner is None or member is None:
            return ""
        head = self._chain(inner, depth + 1)
        return f"{head}.{self._text(member)}" if head else ""

    def _text(self, node: Node) -> str:
        return self._src[node.start_byte : node.end_byte].decode(ENCODING, "replace")
