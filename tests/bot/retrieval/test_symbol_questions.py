import pytest

from bot.retrieval.symbol_questions import SymbolQuestion, detect_symbol_question


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("where is send defined?", "definition", "send"),
        ("Where is `Session.send` defined?", "definition", "Session.send"),
        ("find the definition of Router", "definition", "Router"),
        ("show me the definition of `parse_args`", "definition", "parse_args"),
        ("where is the Router class defined?", "definition", "Router"),
        ("where's the function charge_customer declared", "definition", "charge_customer"),
        ("which file defines WebhookSender?", "definition", "WebhookSender"),
        ("what file is WebhookSender defined in?", "definition", "WebhookSender"),
        ("where is `parse_args`?", "definition", "parse_args"),
        ("can you tell me where `send` is defined?", "definition", "send"),
        ("where is A::b declared?", "definition", "A.b"),
        ("where is Foo#bar defined", "definition", "Foo.bar"),
        ("go to definition of monthly_amount", "definition", "monthly_amount"),
        # context before a comma, a possessive owner, "the one that ..." after the name
        ('in an Action I call cmd.Bool("verbose"), where is Bool defined?', "definition", "Bool"),
        ("where is a schema's safeParse method defined?", "definition", "safeParse"),
        (
            "where is cmd.String(name) defined, the one that reads a flag?",
            "definition",
            "cmd.String",
        ),
        ("when I hit a 404, who calls notFound?", "callers", "notFound"),
        ("where is the State class used by the typer command defined?", "definition", "State"),
        ("who calls send?", "callers", "send"),
        ("which functions call charge()?", "callers", "charge"),
        ("callers of `foo.bar`", "callers", "foo.bar"),
        ("show me all callers of send", "callers", "send"),
        ("where does send get called from?", "callers", "send"),
        ("where is `monthly_amount()` called?", "callers", "monthly_amount"),
        ("does anything call charge_customer?", "callers", "charge_customer"),
        ("which tests call monthly_amount?", "callers", "monthly_amount"),
        ("hey, who calls `send`?", "callers", "send"),
        ("what uses WebhookSender?", "references", "WebhookSender"),
        ("where is MAX_ATTEMPTS used?", "references", "MAX_ATTEMPTS"),
        ("references to MAX_ATTEMPTS", "references", "MAX_ATTEMPTS"),
        ("list all usages of send_email", "references", "send_email"),
        ("who imports `Decimal`?", "references", "Decimal"),
        ("is send used anywhere?", "references", "send"),
        ("how is this project organised?", "overview", ""),
        ("How is the codebase structured?", "overview", ""),
        ("what is the flow of a request?", "overview", ""),
        ("give me an overview of the codebase", "overview", ""),
        ("what are the main components?", "overview", ""),
        ("what is the architecture?", "overview", ""),
        ("what does this project do?", "overview", ""),
        ("map", "overview", ""),
    ],
)
def test_fires(text: str, kind: str, name: str) -> None:
    q = detect_symbol_question(text)
    assert q is not None, text
    assert (q.kind, q.name) == (kind, name)


@pytest.mark.parametrize(
    "text",
    [
        "how does caching work?",
        "where do we retry failed webhooks?",
        "where are webhooks retried?",
        "what is the architecture of the sync service?",
        "what does send call?",  # callees, not callers
        "what is send used for?",
        "where is the retry logic implemented?",
        "how does this code work?",
        "what uses the most memory?",
        "who uses this?",  # nothing to resolve "this" against
        "why does charge_customer fail when the card is expired?",
        "explain how billing decides what to charge",
        "what are the main components of the billing module?",
        "who calls the support team when a payment fails?",
        "where should the retry go?",
    ],
)
def test_ordinary_questions_do_not_fire(text: str) -> None:
    assert detect_symbol_question(text) is None


def test_name_markers_make_it_explicit() -> None:
    plain = detect_symbol_question("where is caching implemented?")
    assert plain == SymbolQuestion("definition", "caching", explicit=False)
    for text in (
        "where is `cache` implemented?",
        "where is cache() implemented?",
        "where is the cache function implemented?",
        "where is cache_get implemented?",
        "where is CacheStore implemented?",
        "where is store.cache implemented?",
    ):
        q = detect_symbol_question(text)
        assert q is not None and q.explicit, text


def test_a_capitalised_word_is_looked_up_without_insisting() -> None:
    q = detect_symbol_question("where is Session?")
    assert q == SymbolQuestion("definition", "Session", explicit=False)
    q = detect_symbol_question("who calls the API?")
    assert q == SymbolQuestion("callers", "API", explicit=False)


def test_bare_where_is_needs_a_code_like_name() -> None:
    assert detect_symbol_question("where is the documentation?") is None
    assert detect_symbol_question("where can I find the docs?") is None
    q = detect_symbol_question("where can I find `load_settings`?")
    assert q == SymbolQuestion("definition", "load_settings", explicit=True)


def test_kind_word_and_place_are_kept() -> None:
    q = detect_symbol_question("where is the `retry` function defined in billing.py?")
    assert q == SymbolQuestion("definition", "retry", True, "function", "billing.py")
    q = detect_symbol_question("who calls send in the shop/ directory?")
    assert q is not None and (q.kind, q.where) == ("callers", "shop/")
    q = detect_symbol_question("where is send used in this repo?")
    assert q is not None and q.where == ""  # "this repo" is the whole scope, not a place


def test_pronoun_resolves_from_an_earlier_clause() -> None:
    q = detect_symbol_question("where is Router defined, and who calls it?")
    assert q == SymbolQuestion("callers", "Router", explicit=True)
    q = detect_symbol_question("Where is the `Router` class? And who uses it?")
    assert q is not None and (q.kind, q.name) == ("references", "Router")


def test_pronoun_resolves_from_the_previous_question_on_later_lines() -> None:
    # Core appends the previous question to a short follow-up, on the next line.
    q = detect_symbol_question("and who calls it?\nwhere is `send` defined?")
    assert q is not None and (q.kind, q.name) == ("callers", "send")
    q = detect_symbol_question("who uses it?\nhow does retry_failed_webhooks work?")
    assert q is not None and (q.kind, q.name) == ("references", "retry_failed_webhooks")
    assert detect_symbol_question("who calls it?") is None


def test_only_the_first_line_is_the_question() -> None:
    # The previous question on a later line must not turn a new question into a lookup.
    assert detect_symbol_question("how does caching work?\nwho calls send?") is None


def test_overview_may_name_a_repository() -> None:
    assert detect_symbol_question("map shop") == SymbolQuestion("overview", where="shop")
    q = detect_symbol_question("how is shop organised?")
    assert q == SymbolQuestion("overview", where="shop")
    q = detect_symbol_question("give me an overview of this repo")
    assert q == SymbolQuestion("overview")


def test_long_messages_are_not_lookups() -> None:
    text = "who calls send? " + "context " * 40
    assert detect_symbol_question(text) is None


def test_last_segment() -> None:
    q = detect_symbol_question("who calls `Session.send`?")
    assert q is not None and q.last == "send"


@pytest.mark.parametrize(
    ("text", "lenient"),
    [
        ("where is cmd.String defined?", False),
        ("where is cmd.String(name) defined, the one that reads a flag?", True),
        ("where is a schema's safeParse method defined?", True),
        ('in an Action I call cmd.Bool("verbose"), where is Bool defined?', True),
        ("where is send defined, and who calls it?", False),
    ],
)
def test_lenient_readings_are_marked(text: str, lenient: bool) -> None:
    q = detect_symbol_question(text)
    assert q is not None and q.lenient is lenient
