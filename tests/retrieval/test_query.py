from bot.retrieval.query import analyze, looks_like_identifier


def test_identifiers_and_dotted_names_become_symbols():
    q = analyze("Why does Session.send call `rebuild_auth` when allow_redirects is off?")
    assert "Session.send" in q.symbols
    assert "rebuild_auth" in q.symbols
    assert "allow_redirects" in q.symbols
    assert "send" in q.exact_terms and "rebuild_auth" in q.exact_terms


def test_paths_and_file_names():
    q = analyze("what does src/flask/json/provider.py do, and conftest.py?")
    assert "src/flask/json/provider.py" in q.paths
    assert "conftest.py" in q.paths
    assert "provider" in q.exact_terms


def test_python_stack_trace_frames():
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/requests/models.py", line 382, in prepare_url\n'
        "    raise InvalidURL(...)\n"
    )
    q = analyze(trace)
    assert "requests/models.py" in q.paths
    assert "prepare_url" in q.symbols


def test_java_style_frame():
    q = analyze("at com.acme.billing.Charger.charge(Charger.java:42)")
    assert "charge" in q.symbols
    assert "Charger.java" in q.paths


def test_code_block_identifiers():
    q = analyze("This fails:\n```python\nclient = makeClient(retry=True)\n```\nwhy?")
    assert "makeClient" in q.symbols
    assert "makeClient" in q.code


def test_plain_question_has_no_exact_terms():
    q = analyze("how are webhooks retried when they fail?")
    assert q.symbols == () and q.paths == ()
    assert "webhook" in q.terms or "webhooks" in q.terms
    assert not q.is_code_question


def test_looks_like_identifier():
    assert looks_like_identifier("getUser")
    assert looks_like_identifier("MAX_SIZE")
    assert not looks_like_identifier("Hello")
    assert not looks_like_identifier("webhooks")
