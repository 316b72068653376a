from bot.text.tokens import (
    code_tokens,
    compounds,
    flags,
    joined_words,
    path_tokens,
    query_terms,
    query_words,
    stem,
    token_counts,
)


def test_identifiers_kept_whole_and_split():
    assert code_tokens("registerHook") == ["registerhook", "register", "hook"]
    assert code_tokens("register_hook") == ["register_hook", "register", "hook"]
    assert code_tokens("HTTPServerError") == ["httpservererror", "http", "server", "error"]


def test_plain_words_get_their_stem_too():
    assert code_tokens("hooks retries class") == ["hooks", "hook", "retries", "retry", "class"]


def test_short_and_long_noise_dropped():
    assert code_tokens("a b 7 12 x" + "y" * 100) == ["12"]


def test_query_terms_drop_stopwords_and_dedupe():
    assert query_terms("How does the Session send a request? send!") == [
        "session",
        "send",
        "request",
    ]


def test_path_tokens():
    assert path_tokens("src/flask/json/provider.py") == ["src", "flask", "json", "provider", "py"]


def test_stem_folds_word_forms_together():
    for group in (
        ("chunk", "chunks", "chunking", "chunked"),
        ("cache", "caches", "caching", "cached"),
        ("retry", "retries", "retried", "retrying"),
        ("embed", "embedded", "embedding"),
        ("parse", "parses", "parsing", "parsed"),
        ("handle", "handles", "handling", "handled"),
        ("index", "indexes", "indexed", "indexing"),
    ):
        assert len({stem(w) for w in group}) == 1, group


def test_stem_leaves_short_and_special_words_alone():
    for word in ("status", "process", "need", "base", "speed", "bus", "analysis", "call", "pass"):
        assert stem(word) == word, word
    assert stem("classes") == "class"


def test_kebab_case_words_are_also_one_token():
    code = 'parser.addoption("--setup-show", help="show fixture setup")  # bad-names-rgxs'
    assert compounds(code) == ["setup_show", "bad_names_rgxs"]
    assert {"setup", "show", "setup_show", "bad_names_rgxs"} <= set(code_tokens(code))
    assert token_counts(code)["setup_show"] == 1
    # a question meets the code: the flag, the message id, the snake_case dest
    assert "setup_show" in query_terms("BytesWarning when using --setup-show")
    assert "unused_import" in query_terms("unused-import false positive")
    # minus signs, numbers and lone dashes are not words
    assert compounds("x - y, a-1, --, 2-3, -v") == []


def test_irregular_past_forms_meet_their_verb():
    for group in (
        ("tear", "tears", "tearing", "torn", "tore"),
        ("write", "writes", "writing", "written", "wrote"),
        ("rewrite", "rewriting", "rewritten"),
        ("override", "overriding", "overridden"),
        ("throw", "throwing", "thrown"),
    ):
        assert len({stem(w) for w in group}) == 1, group
    # words that are also something else in code keep their own stem
    for word in ("found", "bound", "left", "set", "read"):
        assert stem(word) == word
    assert code_tokens("torn") == ["torn", "tear"]


def test_command_line_options_are_tokens_of_their_own():
    code = 'group.addoption("--setup-show", dest="setupshow")\n@click.option("--debug/--no-debug")'
    assert flags(code) == ["__setup_show", "__debug", "__no_debug"]
    assert flags('parser.add_argument("-I", "--interactive")  # or `-k`, [-h]') == [
        "__i",
        "__interactive",
        "__k",
        "__h",
    ]
    assert flags("run pytest -x to stop early") == ["__x"]
    # arithmetic, ranges and dashes are not options
    assert flags("y = -x\nf(-x)\na-x\nx--y\n-- comment\n---\nn = -1\nreturn -I*x") == []
    tokens = code_tokens('parser.addoption("--setup-show")')
    assert tokens[-2:] == ["setup_show", "__setup_show"]  # compound, then option, after words
    assert token_counts("--debug and --debug")["__debug"] == 2
    assert query_terms("what does --setup-show do?")[-2:] == ["setup_show", "__setup_show"]


def test_adjacent_words_are_joined_the_way_code_names_them():
    assert joined_words("how are session fixtures torn down?") == [
        "sessionfixtures",
        "fixturestorn",
        "teardown",
    ]
    assert "setup" in joined_words("while setting up the test")
    assert "filename" in joined_words("which file name is used")
    # stopwords lead nothing; identifiers and kebab-case names keep their own tokens
    assert joined_words("how does the session work") == []
    assert joined_words("Flask.register_error_handler and sphinx-build") == []


def test_query_words_are_the_question_words_with_their_tokens():
    assert query_words("How does assertion rewriting work with rewriting?") == [
        ("assertion",),
        ("rewriting", "rewrit"),
    ]
