"""Definitions in a file and their current lines: the subjects of "who last changed X?".

Python through `ast` (a definition's lines run from its first decorator to its last line);
Go, Rust and JavaScript through the tree-sitter grammars, read here directly and not
through codecite's own chunker or symbol table, so the gold never shares codecite's view
of where a definition starts and ends. Names are what a person types: `Class.method`
(Python, Go receivers, JavaScript classes and `X.prototype.y = function`), `Type::method`
(Rust impl and trait items), the bare name for top-level functions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

LANGUAGES = {".py": "python", ".go": "go", ".rs": "rust", ".js": "javascript", ".mjs": "javascript"}


@dataclass(frozen=True, slots=True)
class Symbol:
    path: str
    name: str
    start: int  # 1-based, inclusive
    end: int

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


def definitions(path: str, source: str) -> list[Symbol]:
    """The definitions of one file (empty for a language not listed or a file that fails)."""
    language = next((lang for ext, lang in LANGUAGES.items() if path.endswith(ext)), "")
    if language == "python":
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
        return [Symbol(path, n, s, e) for n, s, e in _python(tree.body, "")]
    if language:
        return [Symbol(path, n, s, e) for n, s, e in _tree_sitter(language, source)]
    return []


def _python(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, int, int]]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            name = prefix + node.name
            yield name, start, node.end_lineno or node.lineno
            if isinstance(node, ast.ClassDef):
                yield from _python(node.body, name + ".")


def _parser(language: str) -> Any:
    import tree_sitter

    if language == "go":
        import tree_sitter_go as grammar
    elif language == "rust":
        import tree_sitter_rust as grammar
    else:
        import tree_sitter_javascript as grammar
    return tree_sitter.Parser(tree_sitter.Language(grammar.language()))


def _tree_sitter(language: str, source: str) -> Iterator[tuple[str, int, int]]:
    root = _parser(language).parse(source.encode("utf-8")).root_node
    visit: Callable[[Any], Iterator[tuple[str, Any]]] = {
        "go": _go,
        "rust": _rust,
        "javascript": _javascript,
    }[language]
    for name, node in visit(root):
        yield name, node.start_point[0] + 1, node.end_point[0] + 1


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", "replace") if node is not None else ""


def _go(root: Any) -> Iterator[tuple[str, Any]]:
    for node in root.named_children:
        name = _text(node.child_by_field_name("name"))
        if node.type == "function_declaration":
            yield name, node
        elif node.type == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            types = [n for n in _descendants(receiver) if n.type == "type_identifier"]
            yield (f"{_text(types[0])}.{name}" if types else name), node


def _rust(root: Any, owner: str = "") -> Iterator[tuple[str, Any]]:
    for node in root.named_children:
        if node.type == "function_item":
            name = _text(node.child_by_field_name("name"))
            yield (f"{owner}::{name}" if owner else name), node
        elif node.type in ("impl_item", "trait_item"):
            named = node.child_by_field_name("type") or node.child_by_field_name("name")
            head = _text(named).split("<", 1)[0]
            body = node.child_by_field_name("body")
            if body is not None:
                yield from _rust(body, head)
        elif node.type == "mod_item" and _text(node.child_by_field_name("name")) not in (
            "test",
            "tests",  # unit tests live beside the code; they are not what people ask about
        ):
            body = node.child_by_field_name("body")
            if body is not None:
                yield from _rust(body, owner)


_JS_FUNCTIONS = ("function_expression", "arrow_function", "function")


def _javascript(root: Any) -> Iterator[tuple[str, Any]]:
    for node in root.named_children:
        if node.type == "function_declaration":
            yield _text(node.child_by_field_name("name")), node
        elif node.type == "class_declaration":
            cls = _text(node.child_by_field_name("name"))
            for member in node.child_by_field_name("body").named_children:
                if member.type == "method_definition":
                    yield f"{cls}.{_text(member.child_by_field_name('name'))}", member
        elif node.type == "expression_statement":
            assign = node.named_children[0] if node.named_children else None
            if assign is not None and assign.type == "assignment_expression":
                name, right = (
                    _text(assign.child_by_field_name("left")),
                    assign.child_by_field_name("right"),
                )
                if right.type in _JS_FUNCTIONS and not name.startswith("module.exports"):
                    yield name, node
        elif node.type in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                value = decl.child_by_field_name("value")
                if value is not None and value.type in _JS_FUNCTIONS:
                    yield _text(decl.child_by_field_name("name")), node


def _descendants(node: Any) -> Iterator[Any]:
    if node is None:
        return
    for child in node.named_children:
        yield child
        yield from _descendants(child)
