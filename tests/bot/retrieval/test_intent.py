import pytest

from bot.retrieval.intent import REPORT_PRIOR, TEST_PRIOR, file_kind, intent_of, prior


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("src/flask/app.py", "code"),
        ("tests/test_app.py", "test"),
        ("src/app_test.go", "test"),
        ("web/button.spec.ts", "test"),
        ("conftest.py", "test"),
        ("src/main/java/UserServiceTest.java", "test"),
        ("README.md", "doc"),
        ("docs/conf.py", "doc"),
        ("examples/tutorial/app.py", "example"),
        ("src/contest.py", "code"),
        ("src/latest.py", "code"),
        ("Makefile", "config"),
        ("pyproject.toml", "config"),
        (".github/workflows/ci.yml", "config"),
        ("ChangeLog", "doc"),
        ("CHANGES", "doc"),
        ("NEWS", "doc"),
        ("AUTHORS", "doc"),
        ("src/news.py", "code"),
    ],
)
def test_file_kind(path, kind):
    assert file_kind(path) == kind


def test_behaviour_questions_demote_tests_and_test_questions_do_not():
    behaviour = intent_of("why does the session drop cookies on redirect?")
    assert prior("tests/test_sessions.py", behaviour) == TEST_PRIOR
    assert prior("requests/sessions.py", behaviour) == 1.0
    testing = intent_of("how do I test redirects with a fixture?")
    assert prior("tests/test_sessions.py", testing) == 1.0
    docs = intent_of("where is the upgrade guide documented?")
    assert prior("docs/upgrade.rst", docs) == 1.0


@pytest.mark.parametrize(
    "question",
    [
        "how do I test redirects?",
        "which tests cover the retry logic?",
        "where are the unit tests for the parser?",
        "write a test for charge_customer",
        "test cases for the JSON provider",
    ],
)
def test_asking_for_tests(question):
    assert intent_of(question).tests


@pytest.mark.parametrize(
    "question",
    [
        "pytest crashes when a fixture raises in teardown",
        "this test fails on Windows: the session drops cookies",
        "unittest TestCase subclasses are collected twice",
    ],
)
def test_mentioning_tests_is_not_asking_for_them(question):
    assert not intent_of(question).tests


def test_a_report_wants_code_unless_it_names_the_file_or_asks_for_its_kind():
    about_a_crash = intent_of("pytest crashes when a fixture raises in teardown")
    for path in ("CHANGES.rst", "ChangeLog", ".github/workflows/ci.yml", "examples/app.py"):
        assert prior(path, about_a_crash, report=True) == REPORT_PRIOR
        assert prior(path, about_a_crash, report=True, named=True) == 1.0
    assert prior("src/_pytest/fixtures.py", about_a_crash, report=True) == 1.0
    assert prior("testing/test_fixtures.py", about_a_crash, report=True) == TEST_PRIOR
    about_docs = intent_of("Docs: the changelog entry for 8.0 is wrong")
    assert prior("CHANGES.rst", about_docs, report=True) == 1.0
    # the same files, asked about in a question rather than a report
    assert REPORT_PRIOR < prior("CHANGES.rst", about_a_crash) < 1.0
