"""Calls read from a definition's lines, and the one definition each reaches."""

from __future__ import annotations

from bot.retrieval.howcalls import CHAINED, CallSite, calls_in, go_receiver, in_test_module, resolve
from bot.retrieval.howpath import asks_how
from bot.retrieval.preamble import without_preamble
from bot.retrieval.symbol_questions import detect_symbol_question
from bot.symbols.model import SymbolDef


def _def(path: str, symbol: str, kind: str = "function") -> SymbolDef:
    return SymbolDef("r", path, symbol.rsplit(".", 1)[-1], symbol, kind, 1, 5)


def test_calls_leave_out_comments_strings_and_the_definitions_own_head() -> None:
    text = '''def run(self, cart):
    """Call `send()` to deliver; see charge(x)."""
    # retry(later) is not a call either
    amount = total_of(cart)  # nor is fmt(this)
    label = "charge(now)"
    return self.gateway.charge(card, amount) if ok(amount) else None'''
    calls = calls_in(text, 10, "python")
    assert [(c.receiver, c.name, c.line) for c in calls] == [
        ("", "total_of", 13),
        ("gateway", "charge", 15),
        ("", "ok", 15),
    ]


def test_go_receivers_and_js_private_methods() -> None:
    go = "func (mx *Mux) routeHTTP(w http.ResponseWriter) {\n\tmx.tree.FindRoute(rctx)\n}"
    assert go_receiver(go) == ("mx", "Mux")
    assert [(c.receiver, c.name) for c in calls_in(go, 1, "go")] == [("tree", "FindRoute")]
    js = "async create() {\n  return ky.#retry(() => ky.#fetch());\n}"
    assert [c.name for c in calls_in(js, 1, "typescript")] == ["#retry", "#fetch"]


def test_resolution_follows_the_way_the_call_is_written() -> None:
    caller = _def("pkg/mux.go", "Mux.routeHTTP", "method")
    own = _def("pkg/mux.go", "Mux.handle", "method")
    other = _def("pkg/other.go", "Other.handle", "method")
    # the receiver variable of a Go method: the same type's method
    assert resolve(CallSite("handle", "mx", 3), caller, "mx", [own, other]) == own
    # a receiver named like a class: that class's method
    router = _def("pkg/router.go", "Router.match", "method")
    route = _def("pkg/route.go", "Route.match", "method")
    assert resolve(CallSite("match", "router", 3), caller, "", [router, route]) == router
    # a call on some other object with several candidates: left out, never guessed
    assert resolve(CallSite("match", "x", 3), caller, "", [router, route]) is None
    # a bare call: the file's own function first, then the directory's
    here = _def("pkg/mux.go", "split")
    there = _def("pkg/util.go", "split")
    assert resolve(CallSite("split", "", 3), caller, "", [there, here]) == here
    assert resolve(CallSite("split", "", 3), caller, "", [there]) == there
    # tests and examples are never a step
    assert resolve(CallSite("split", "", 3), caller, "", [_def("tests/test_x.py", "split")]) is None


def test_a_call_never_steps_to_another_overload_of_its_own_method() -> None:
    # `super().unsign(v)` inside an overloaded `Stamped.unsign`: the stubs of the same
    # method are no step of its path; the parent's method is found by name elsewhere
    impl = SymbolDef("r", "pkg/timed.py", "unsign", "Stamped.unsign", "method", 40, 90)
    stub = SymbolDef("r", "pkg/timed.py", "unsign", "Stamped.unsign", "method", 20, 26)
    parent = SymbolDef("r", "pkg/signer.py", "unsign", "Signer.unsign", "method", 10, 20)
    assert resolve(CallSite("unsign", "", 50), impl, "", [stub, impl]) is None
    assert resolve(CallSite("unsign", "self", 50), impl, "", [stub, parent]) == parent


def test_preambles_do_not_change_what_a_question_is() -> None:
    plain = detect_symbol_question("what are the main parts of this project?")
    for opening in ("I'm new here: ", "quick question - ", "Hi team, sorry if this is obvious, "):
        assert without_preamble(opening + "where is X?") == "where is X?"
        assert detect_symbol_question(opening + "what are the main parts of this project?") == plain
    assert detect_symbol_question("I'm new here: who calls `send`?").kind == "callers"  # type: ignore[union-attr]
    assert asks_how("Newbie here. How does the router pick a handler?")
    assert not asks_how("where is the router defined?")
    assert without_preamble("hi") == "hi"  # nothing would be left: unchanged


def test_a_link_of_a_chain_is_a_method_call_never_a_free_function() -> None:
    # `route\n    .path()`: the receiver is what `route` is, not the free function `path`
    text = "fn segment(route: &Route) -> &str {\n    route\n        .path()\n        .splitn(2)\n}"
    calls = calls_in(text, 1, "rust")
    assert [(c.receiver, c.name) for c in calls] == [(CHAINED, "path"), (CHAINED, "splitn")]
    assert [(c.receiver, c.name) for c in calls_in("a.b().c(x)", 1, "rust")] == [
        ("a", "b"),
        (CHAINED, "c"),
    ]
    caller = _def("src/filters/path.rs", "segment")
    free = _def("src/filters/path.rs", "path")
    method = _def("src/route.rs", "Route.path", "method")
    assert resolve(CallSite("path", CHAINED, 3), caller, "", [free]) is None
    assert resolve(CallSite("path", CHAINED, 3), caller, "", [free, method]) == method
    # written bare, the same name is still the file's own function
    assert resolve(CallSite("path", "", 3), caller, "", [free, method]) == free


def test_a_test_module_beside_the_code_is_never_a_step() -> None:
    assert in_test_module("tests.unhandled_customs")
    assert in_test_module("sealed.tests.combine")
    assert in_test_module("router_test.TestMatch")
    assert not in_test_module("Rejections.preferred")
    assert not in_test_module("contest.run")
    caller = _def("src/reject.rs", "Rejection.into_response", "method")
    helper = _def("src/reject.rs", "tests.combine_n")
    assert resolve(CallSite("combine_n", "", 3), caller, "", [helper]) is None


def test_a_class_named_call_is_the_classs_own_even_when_named_like_a_builtin() -> None:
    text = """     * @throws Selector.SelectorParseException (unchecked) on an invalid query.
     */
    public Elements select(String cssQuery) {
        return Selector.select(cssQuery, this);
    }"""
    calls = calls_in(text, 10, "java")  # a doc comment whose opening is above: no calls
    assert [(c.receiver, c.name, c.line) for c in calls] == [("Selector", "select", 13)]
    # the language's own objects and bare builtins stay out
    js = "const o = Object.assign({}, JSON.parse(s))\nconst n = select(o)\nmap(o)"
    assert [(c.receiver, c.name) for c in calls_in(js, 1, "javascript")] == []


def test_a_pointer_write_is_code_not_a_doc_comment_line() -> None:
    go = "func fill(out *Result) {\n\t*out = compute(1)\n}"
    assert [c.name for c in calls_in(go, 1, "go")] == ["compute"]
