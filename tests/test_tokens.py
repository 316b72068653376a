from bot.index.tokens import code_tokens, path_tokens, query_terms, stem


def test_identifiers_kept_whole_and_split():
    assert code_tokens("registerHook") == ["registerhook", "register", "hook"]
    assert code_tokens("register_hook") == ["register_hook", "register", "hook"]
    assert code_tokens("HTTPServerError") == ["httpservererror", "http", "server", "error"]


def test_plain_words_stemmed_only_when_plural():
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


def test_stem_is_timid():
    assert stem("status") == "status"
    assert stem("process") == "process"
    assert stem("classes") == "class"
    assert stem("parsing") == "parsing"
