"""Members made at run time in a loop over names (`bot.symbols.exports` keeps the rest).

From the query's `@loop` captures, an assignment to a computed member, `setattr` or
`define_method`, inside a loop that binds the member's name:

    for (const m of requestMethods) ky[m] = ...     generated * from requestMethods (owner ky)
    ['get', 'post'].forEach(m => app[m] = ...)      generated get, post (owner app)
    for name in ("a", "b"): setattr(cls, name, f)   generated a, b (owner: the class)
    VERBS.each { |v| define_method(v) { ... } }    generated from VERBS (owner: the class)

The names are the loop's literal list, a list constant of the same file, or (`*`) names
a question resolves through the file's imports later. A loop copying data (over
`Object.keys(x)`, assigning a subscript) makes no member.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from bot.symbols.bindings import Bindings
from bot.symbols.exports import CALLS, CHAINS, FUNCTIONS, Found, dotted_chain, expression
from bot.symbols.model import EVERY_NAME, GENERATED
from bot.symbols.typenames import first_named, listed_names, text

_LOOP_DEPTH = 8  # parents walked up from an assignment to find its loop
_ITERATORS = frozenset({"forEach", "map"})


def _loop_of(node: Node, variable: str, src: bytes) -> tuple[Node, Node] | None:
    """The loop over names that binds `variable` around `node`: (loop, iterable)."""
    at: Node | None = node
    for _ in range(_LOOP_DEPTH):
        at = at.parent if at is not None else None
        if at is None:
            return None
        if at.type in ("do_block", "block") and at.child_by_field_name("parameters") is not None:
            return _ruby_loop(at, variable, src)
        if at.type in ("for_in_statement", "for_statement"):
            left, right = at.child_by_field_name("left"), at.child_by_field_name("right")
            if left is not None and right is not None and _declares(left, variable, src):
                return at, right
        elif at.type in ("arrow_function", "function_expression", "function"):
            return _callback_loop(at, variable, src)
    return None


def _declares(left: Node, variable: str, src: bytes) -> bool:
    if left.type == "identifier":
        return text(left, src) == variable
    return any(c.type == "identifier" and text(c, src) == variable for c in left.named_children)


def _ruby_loop(block: Node, variable: str, src: bytes) -> tuple[Node, Node] | None:
    """`names.each do |m| ... end`: the call and `names`, when m is the block's parameter."""
    parameters = block.child_by_field_name("parameters")
    first = first_named(parameters) if parameters is not None else None
    call = block.parent
    if first is None or text(first, src) != variable or call is None or call.type != "call":
        return None
    if text(call.child_by_field_name("method"), src) not in _RUBY_ITERATORS:
        return None
    iterable = call.child_by_field_name("receiver")
    return (call, iterable) if iterable is not None else None


_RUBY_ITERATORS = frozenset({"each", "each_with_index", "map", "each_key"})


def _callback_loop(function: Node, variable: str, src: bytes) -> tuple[Node, Node] | None:
    """`names.forEach(function (m) {...})`: the call and `names`, when m is its first parameter."""
    parameters = function.child_by_field_name("parameters") or function.child_by_field_name(
        "parameter"
    )
    first = first_named(parameters) if parameters is not None else None
    if parameters is not None and parameters.type == "identifier":
        first = parameters
    if first is None or text(first, src) != variable:
        return None
    arguments = function.parent
    call = arguments.parent if arguments is not None else None
    if call is None or call.type != "call_expression":
        return None
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "member_expression":
        return None
    if text(callee.child_by_field_name("property"), src) not in _ITERATORS:
        return None
    iterable = callee.child_by_field_name("object")
    return (call, iterable) if iterable is not None else None


def _generated(
    found: Found,
    at: Node,
    owner: str,
    key: Node,
    value: Node | None,
    src: bytes,
    b: Bindings,
    scope: str,
) -> None:
    """Members of `owner` made for each name the loop around `at` binds to `key`."""
    variable = text(key, src) if key.type == "identifier" else ""
    loop = _loop_of(at, variable, src) if variable else None
    if loop is None or not owner:
        return
    statement, iterable = loop
    chain = dotted_chain(iterable, src) or (
        text(iterable, src) if iterable.type == "constant" else ""
    )
    listed = listed_names(iterable, src) or b.lists.get(chain, (0, None))[1]  # or one above
    if listed is None and (not chain or value is None or value.type not in _MADE):
        return  # a loop copying data (`for k of Object.keys(x)`), not making members
    if owner in ("this", "self", "cls"):
        owner = b.class_of(scope) or owner
    owner = owner.removesuffix(".prototype")
    if listed is not None:
        for name in listed:
            found.add(name, GENERATED, expression(iterable, src), at, owner=owner, span=statement)
    else:
        found.add(EVERY_NAME, GENERATED, chain, at, owner=owner, span=statement)


# Values that make a member (not copied data); Ruby's define_method's block.
_MADE = FUNCTIONS | CALLS | CHAINS | {"do_block", "block"}


def read_loops(
    language: str,
    nodes: list[Node],
    src: bytes,
    found: Found,
    bindings: Bindings,
    owner_of: Callable[[int], str],
) -> None:
    """Members assigned to computed names in loops (`ky[m] = ...`, `setattr(cls, m, f)`)."""
    for node in nodes:
        scope = owner_of(node.start_byte)
        if node.type == "assignment_expression":  # JavaScript, TypeScript
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or left.type != "subscript_expression":
                continue
            owner = dotted_chain(left.child_by_field_name("object"), src) or text(
                left.child_by_field_name("object"), src
            )
            key = left.child_by_field_name("index")
            if key is not None:
                _generated(found, node, owner, key, right, src, bindings, scope)
        elif node.type == "call" and language == "ruby":  # define_method(name) { ... }
            arguments = node.child_by_field_name("arguments")
            key = first_named(arguments) if arguments is not None else None
            block = node.child_by_field_name("block")
            if key is not None:
                _generated(found, node, "self", key, block or key, src, bindings, scope)
        elif node.type == "call" and language == "python":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            given = arguments.named_children if arguments is not None else []
            if text(function, src) != "setattr" or len(given) != 3:
                continue
            owner = dotted_chain(given[0], src)
            _generated(found, node, owner, given[1], given[2], src, bindings, scope)
