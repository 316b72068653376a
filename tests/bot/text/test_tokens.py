from bot.text.tokens import code_tokens, compounds, path_tokens, query_terms, stem, token_counts


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
