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


def test_pytest_long_traceback_frames_name_files_and_functions():
    report = (
        "BytesWarning with --setup-show\n\n```\n"
        "src/_pytest/runner.py:244: in from_call\n    result = func()\n"
        "src/_pytest/setuponly.py:69: in _show_fixture_action\n"
        "    tw.write('[{}]'.format(fixturedef.cached_param))\n```\n"
    )
    q = analyze(report)
    assert q.paths[:2] == ("src/_pytest/runner.py", "src/_pytest/setuponly.py")
    assert "_show_fixture_action" in q.symbols


def test_a_long_multi_line_question_leads_with_its_subject():
    issue = "Proxy authentication bug\n\n" + "When using proxies, pip list shows:\n" * 8
    assert analyze(issue).subject == "Proxy authentication bug"


def test_short_or_single_line_questions_have_no_separate_subject():
    assert analyze("Where is the session created?\nIn which module?").subject == ""
    assert analyze("word " * 100).subject == ""


def test_named_identifiers_and_options_are_looked_up_whole():
    q = analyze("_bench_marker_3")
    assert q.verbatim == (("bench_marker_3",),)
    assert q.focus == 1.0  # the question is the identifier
    q = analyze("what does the --debug option of flask run do?")
    assert q.verbatim == (("__debug",),)
    assert 0 < q.focus < 1
    # a kebab-case option is also read back as argparse's dest or joined up
    assert analyze("what does --setup-show do?").verbatim == (
        ("__setup_show", "setup_show", "setupshow"),
    )
    # plain words and one-word names are not identifiers
    assert analyze("how are webhooks retried?").verbatim == ()
    assert analyze("where is `send` called?").verbatim == ()


def test_a_report_says_what_it_is_about_in_prose():
    report = (
        "register_hook drops hooks given as a list\n\n"
        + "Calling `Session.register_hook('response', [a, b])` keeps only the last.\n" * 4
    )
    q = analyze(report)
    assert q.is_report and q.verbatim == (("register_hook",),)
    assert q.focus == 0.0  # its identifiers lead nothing by themselves
    assert q.concepts[0] == ("register_hook", "register", "hook")  # from the subject line


def test_a_report_is_searched_without_its_boilerplate():
    report = (
        "Dataset.interp drops attrs\n\nAfter `ds.interp(x=new_x)` the attrs are gone.\n\n"
        "INSTALLED VERSIONS\n------------------\ncommit: None\nLC_ALL: None\n"
        "python: 3.11.4 (main, Jun 10 2023) [GCC 12.2.0]\nnetCDF4: 1.6.4\n\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/site-packages/xarray/core/dataset.py", line 3812, in interp\n'
        "See https://github.com/pydata/xarray/blob/main/xarray/core/missing.py#L60\n"
    )
    q = analyze(report)
    for noise in ("netcdf4", "lc_all", "installed", "github", "missing"):
        assert noise not in q.terms
    assert "LC_ALL" not in q.symbols
    assert {"interp", "attrs"} <= set(q.terms)
    assert q.paths == ("xarray/core/missing.py", "xarray/core/dataset.py")


def test_words_written_as_one_join_the_terms():
    assert "teardown" in analyze("how are session scoped fixtures torn down?").joined
