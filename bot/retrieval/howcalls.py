"""The calls a definition's body makes, and the one definition each call reaches, if it is clear.

A how-it-works answer follows the code from one definition to the next. The body's
calls are read from its lines (comments and string literals blanked first, so a
docstring's "call `send()`" is no call), each as written: a bare `send(...)`, or
`recv.send(...)` with its receiver. A call is then resolved against the symbol
table's definitions of that name in the same repository, the way a reader would:

- `self.send()`, `this.send()`, `cls.send()`, or a Go method's own receiver
  (`mx.route()` in `func (mx *Mux) ...`): a method of the same class or type;
- a bare `send()`: the file's own definition, else one in the same directory
  (a Go package, a JS module's siblings), else the only one in the repository;
- `router.match()`: a method whose class is named like the receiver
  (`Router.match`), else the only method of that name in the repository;
- a link of a chain (`route.path().splitn(...)`, `.next()` on its own line): a method
  of some class, never a free function of the same name.

Anything that stays ambiguous is left out: a path shows only steps the code makes plain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from posixpath import dirname

from bot.retrieval.intent import file_kind
from bot.symbols.model import SymbolDef

CALLABLE_KINDS = frozenset({"function", "method", "constructor", "decorator", "macro"})
# `recv.name(`, `recv?.name(`, `Cls::name(`, `name(`; JS private methods keep their `#`.
_CALL = re.compile(r"(?:([A-Za-z_$][\w$]*)\s*(?:\?\.|\.|->|::)\s*)?(#?[A-Za-z_$][\w$]*)\s*\(")
_SELF = frozenset({"self", "this", "cls", "super", "me"})
# Words that look like calls in some language but are statements or builtins of the language.
_NOT_CALLS = frozenset(
    """if elif else for while switch case catch return function func def fn lambda typeof
    sizeof new delete throw await async yield print len range make append panic defer go
    select match with assert not and or in is del raise except try finally import from require
    super isinstance issubclass getattr setattr hasattr str int float bool list dict set tuple
    type repr format sorted min max sum any all map filter zip enumerate open iter next
    console log String Number Boolean Object Array Promise Error JSON Math Date RegExp
    Symbol parseInt parseFloat setTimeout clearTimeout cap copy close string byte rune
    error uint int64 int32 uint64 float64 recover println printf sprintf errorf""".split()
)
# A doc comment's inner line (`* @throws X (...)`, `/// see run()`); `*p = f(x)` is code.
_DOC_BODY = re.compile(r"\s*(?:\*(?:\s|/|$)(?!.*[=;{])|///|//!)")
CHAINED = "."  # the receiver of a call made on what an earlier call returned
# A definition inside a test module of implementation code (Rust's `mod tests`, `test_x`).
_TEST_OWNER = re.compile(r"(?:^|\.)(?:tests?|test_\w+|\w+_tests?)\.", re.IGNORECASE)
_GO_RECEIVER = re.compile(r"^\s*func\s*\(\s*([A-Za-z_]\w*)\s+\*?\s*([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class CallSite:
    name: str
    receiver: str  # "" for a bare call
    line: int  # the file's own line number


def calls_in(text: str, start_line: int, language: str) -> list[CallSite]:
    """Every call written in `text` (whose first line is `start_line`), in order."""
    found: list[CallSite] = []
    for offset, line in enumerate(_code_only(text, language).split("\n")):
        if _DOC_BODY.match(line):
            continue  # a doc comment whose opening is above the text (`* @throws X (...)`)
        for m in _CALL.finditer(line):
            receiver, name = m.group(1) or "", m.group(2)
            if not receiver and line[: m.start()].rstrip().endswith("."):
                receiver = CHAINED  # `).name(` or a chain continued on this line
            if _not_a_call(receiver, name) or (
                not receiver and line[: m.start()].rstrip().endswith("def")
            ):
                continue
            if _is_declaration(line, m.start()) or _opens_body(line, m.end()):
                continue
            found.append(CallSite(name, receiver, start_line + offset))
    return found


def _not_a_call(receiver: str, name: str) -> bool:
    """A statement or a builtin; but a method named like one, called on a class the code
    names (`Selector.select(q)`, `Stream.filter(f)`), is the class's own."""
    if receiver[:1].isupper():
        return receiver in _NOT_CALLS  # `JSON.stringify`, `Object.assign`: the language's
    return name in _NOT_CALLS


def _is_declaration(line: str, at: int) -> bool:
    """`func name(`, `def name(`, `function name(`: the definition's own head, not a call."""
    before = line[:at].rstrip()
    return before.endswith(("func", "def", "function", "fn")) or bool(
        re.search(r"\bfunc\s*\([^)]*\)\s*$", before)
    )


def _opens_body(line: str, after_paren: int) -> bool:
    """`create() {`, `run(Cart cart) {`, `charge(c): Promise<R> {`: a head whose body follows,
    not a call (`if ok(x):` in Python is a call: its heads are found by `def`)."""
    depth = 1
    for i in range(after_paren, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                rest = line[i + 1 :].strip()
                typed = rest.startswith((":", "->", "throws ")) and rest.endswith("{")
                return rest == "{" or typed  # `): Promise<T> {`, `) -> T {`
    return False


def go_receiver(head: str) -> tuple[str, str]:
    """(variable, type) of a Go method's receiver from its first line; ("", "") otherwise."""
    m = _GO_RECEIVER.match(head)
    return (m.group(1), m.group(2)) if m else ("", "")


def resolve(
    call: CallSite, caller: SymbolDef, receiver_var: str, candidates: Sequence[SymbolDef]
) -> SymbolDef | None:
    """The one definition `call` (made in `caller`) reaches among `candidates`, or None."""
    pool = [
        d
        for d in candidates
        if d.repo == caller.repo
        and d.kind in CALLABLE_KINDS
        and implementation(d.path)
        and not in_test_module(d.symbol)
        and d.symbol != caller.symbol  # itself, or another overload of itself
    ]
    if not pool:
        return None
    owner = _owner(caller.symbol)
    if call.receiver in _SELF or (receiver_var and call.receiver == receiver_var):
        return _only([d for d in pool if _owner(d.symbol) == owner] or pool)
    if not call.receiver:
        for narrowed in (
            [d for d in pool if d.path == caller.path and _owner(d.symbol) in ("", owner)],
            [d for d in pool if dirname(d.path) == dirname(caller.path) and not _owner(d.symbol)],
            [d for d in pool if not _owner(d.symbol)],
        ):
            if narrowed:
                return _only(narrowed)
        return None
    if call.receiver == CHAINED:
        return _only([d for d in pool if _owner(d.symbol)])
    alike = [d for d in pool if _receiver_names(call.receiver, _owner(d.symbol))]
    return _only(alike or pool)


def implementation(path: str) -> bool:
    """Implementation code, not tests or examples (`_examples/` counts as `examples/`)."""
    return file_kind("/".join(part.lstrip("_") for part in path.split("/"))) == "code"


def in_test_module(symbol: str) -> bool:
    """A definition of a test module kept beside the code (`tests.unhandled_customs`)."""
    return bool(_TEST_OWNER.search(symbol))


def _only(defs: Sequence[SymbolDef]) -> SymbolDef | None:
    """The definition, when there is exactly one (overloads at one place count as one)."""
    places = {(d.path, d.symbol) for d in defs}
    return defs[0] if len(places) == 1 else None


def _owner(symbol: str) -> str:
    return symbol.rpartition(".")[0]


def _receiver_names(receiver: str, owner: str) -> bool:
    """`router` names `Router`, `routes` names `Route`: a receiver named after its class."""
    short = owner.rpartition(".")[2].lower()
    return bool(short) and receiver.lower().strip("_") in (short, short + "s", "_" + short)


def _code_only(text: str, language: str) -> str:
    """`text` with comments and string literals blanked (line breaks kept, so lines stay)."""
    hash_comments = language in ("python", "ruby", "php", "shell", "bash", "yaml", "perl")
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith(('"""', "'''"), i):
            end = text.find(text[i : i + 3], i + 3)
            end = n if end < 0 else end + 3
            out.append(_blank(text[i:end]))
            i = end
        elif ch in "\"'`":
            end = _string_end(text, i)
            out.append(_blank(text[i:end]))
            i = end
        elif (ch == "#" and hash_comments) or text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(_blank(text[i:end]))
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _string_end(text: str, i: int) -> int:
    quote, j = text[i], i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote or (text[j] == "\n" and quote != "`"):
            return j + 1
        j += 1
    return len(text)


def _blank(text: str) -> str:
    return "".join("\n" if c == "\n" else " " for c in text)
