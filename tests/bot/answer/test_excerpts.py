"""Excerpts that show the point: the lines that answer, whole statements, real line numbers."""

from __future__ import annotations

from pathlib import Path

from bot.answer.excerpts import EXCERPT_LINES, best_excerpt, line_scores
from bot.config import Settings
from bot.core import CLI, Core
from bot.retrieval.retriever import Source
from bot.text.tokens import query_terms

# A credentials loader in the style of many HTTP clients: the answer to "what happens if the
# file is malformed?" is the `except` clause far below the function's first lines.
LOADER = '''def load_credentials(url, raise_errors=False):
    """Return (user, password) for the host of `url` from the user's credentials file."""
    path = os.environ.get("CREDENTIALS_FILE")
    if path is None:
        candidates = [os.path.expanduser(f"~/{name}") for name in CREDENTIAL_FILES]
    else:
        candidates = [path]

    found = None
    for candidate in candidates:
        if os.path.exists(candidate):
            found = candidate
            break
    if found is None:
        return None

    host = urlsplit(url).hostname
    if host is None:
        return None

    try:
        entry = CredentialsFile(found).lookup(host)
        if entry is not None:
            return (entry.login or "", entry.password or "")
    except (CredentialsParseError, OSError):
        # A credentials file that cannot be parsed or read is ignored
        # unless the caller asked to see the error.
        if raise_errors:
            raise
    return None
'''

# Command-line options: the answer to "what does --dry-run do?" is the option's help text.
OPTIONS = """def register_options(parser):
    group = parser.add_group("output")
    group.add_option(
        "--quiet",
        "-q",
        action="store_true",
        help="Print nothing but errors",
    )
    group.add_option(
        "--dryrun",
        "--dry-run",
        action="store_true",
        help="Show the changes that would be made, change nothing",
    )
    group.add_option(
        "--color",
        choices=["auto", "always", "never"],
        help="When to color the output",
    )
"""


def _source(text: str, start: int = 101, path: str = "client/credentials.py") -> Source:
    end = start + text.count("\n") - (1 if text.endswith("\n") else 0)
    return Source("client", path, "python", start, end, "", text.rstrip("\n"), 1.0)


def _weights(question: str, rare: dict[str, float] | None = None) -> dict[str, float]:
    """Each word of the question at 1.0, or its weight in `rare` (as IDF would weigh it)."""
    return {t: (rare or {}).get(t, 1.0) for t in query_terms(question)}


def _file_lines(source: Source, excerpt: Source) -> list[str]:
    lines = source.text.split("\n")
    return lines[excerpt.start_line - source.start_line : excerpt.end_line - source.start_line + 1]


def test_a_failure_question_shows_the_except_clause_and_its_body() -> None:
    source = _source(LOADER)
    # As in a real index: "malformed" is in no chunk (the heaviest), "file" in many.
    rare = {"credentials": 2.5, "credential": 2.5, "malformed": 4.0, "malform": 4.0}
    question = "what happens if the credentials file is malformed?"
    excerpt = best_excerpt(source, _weights(question, rare))
    lines = excerpt.text.split("\n")
    assert "    except (CredentialsParseError, OSError):" in lines
    assert lines[-1] == "            raise"  # the whole handler, down to what it does
    assert excerpt.start_line == 101 + LOADER.split("\n").index(lines[0])
    assert _file_lines(source, excerpt) == lines  # real line numbers, exact text
    assert len(lines) <= EXCERPT_LINES


def test_an_option_question_shows_the_whole_option_with_its_help() -> None:
    source = _source(OPTIONS, start=40, path="tool/options.py")
    excerpt = best_excerpt(source, _weights("what does --dry-run do?"))
    assert excerpt.text.split("\n") == [
        "    group.add_option(",
        '        "--dryrun",',
        '        "--dry-run",',
        '        action="store_true",',
        '        help="Show the changes that would be made, change nothing",',
        "    )",
    ]
    assert (excerpt.start_line, excerpt.end_line) == (48, 53)
    assert _file_lines(source, excerpt) == excerpt.text.split("\n")


def test_rare_words_choose_the_line() -> None:
    source = _source(OPTIONS, start=1, path="tool/options.py")
    # Three lines hold three common words each; one holds the rare one: weights decide.
    weights = {"group": 1.0, "add_option": 1.0, "option": 1.0, "dry_run": 4.0}
    scores = line_scores(source.text.split("\n"), weights)
    assert scores.index(max(scores)) == 10
    assert sorted(scores)[-2] == 3.0
    excerpt = best_excerpt(source, weights)
    assert (excerpt.start_line, excerpt.end_line) == (9, 14)


def test_a_short_block_is_shown_whole_and_no_match_shows_the_head() -> None:
    short = _source("def f():\n    return 1\n")
    assert best_excerpt(short, _weights("anything")) == short
    long = _source(LOADER)
    head = best_excerpt(long, {"zebra": 1.0})
    assert head.start_line == long.start_line
    assert head.text.split("\n") == LOADER.split("\n")[:7]  # the blank 8th line trimmed


def test_a_long_statement_is_capped_around_the_best_line() -> None:
    entries = "\n".join(f'    "key_{n}": {n},' for n in range(60))
    text = f'TABLE = {{\n{entries}\n    "needle_key": 99,\n{entries}\n}}\n'
    source = _source(text, start=1, path="tool/table.py")
    excerpt = best_excerpt(source, {"needle_key": 3.0, "needle": 1.0, "key": 1.0})
    assert '    "needle_key": 99,' in excerpt.text.split("\n")
    assert excerpt.end_line - excerpt.start_line + 1 == EXCERPT_LINES
    assert _file_lines(source, excerpt) == excerpt.text.split("\n")


def test_an_extractive_answer_quotes_the_handler_from_a_real_index(tmp_path: Path) -> None:
    tree = tmp_path / "client"
    (tree / "client").mkdir(parents=True)
    (tree / "client" / "credentials.py").write_text("import os\n\n\n" + LOADER, encoding="utf-8")
    (tree / "client" / "options.py").write_text(OPTIONS, encoding="utf-8")
    core = Core.from_settings(Settings())
    try:
        core.index_repo(str(tree), name="client")
        answer = core.ask("what happens if the credentials file is malformed?", CLI)
        dry_run = core.ask("what does --dry-run do?", CLI)
    finally:
        core.close()
    top = answer.citations[0]
    assert top.path == "client/credentials.py"
    handler = 3 + LOADER.split("\n").index("    except (CredentialsParseError, OSError):") + 1
    assert top.start_line <= handler <= top.end_line
    assert "    except (CredentialsParseError, OSError):\n" in answer.text
    option = dry_run.citations[0]
    assert (option.path, option.start_line, option.end_line) == ("client/options.py", 9, 14)
    assert 'help="Show the changes that would be made, change nothing",' in dry_run.text


# A one-line definition right after the end of a call and a blank line: the context an
# excerpt needs is below it (the code that uses it), not a lone `)` above.
PATTERNS = """_PREFIXES = (
    "ghp_",
    "glpat-",
    "xoxb-",
)

_PEM_BEGIN = re.compile(r"-----BEGIN (RSA |EC )?PRIVATE KEY-----")
_NEWLINE = re.compile(r"\\\\n")


def private_key_lines(text):
    for match in _PEM_BEGIN.finditer(text):
        yield match.start()
"""


def test_an_excerpt_opens_on_code_not_on_a_closer_or_a_blank_line() -> None:
    source = Source("r", "keys.py", "python", 50, 63, "", PATTERNS, 1.0)
    weights = {t: 1.0 for t in query_terms("how is the PEM begin marker of a private key matched?")}
    excerpt = best_excerpt(source, weights)
    shown = excerpt.text.split("\n")
    assert shown[0].startswith("_PEM_BEGIN = re.compile(")
    assert excerpt.start_line == 50 + PATTERNS.split("\n").index(shown[0])
    assert len(shown) >= 3  # the lines below give the context


def test_the_code_outweighs_the_doc_comment_that_repeats_the_question() -> None:
    # Rust's doc comment says "filter", "method" and "POST" too, in an example in the
    # middle of the comment; the excerpt shows the code that checks the method
    text = """/// Create a `Filter` that requires the request method to be `POST`.
///
/// # Example
///
/// ```
/// use warp::Filter;
///
/// let post_only = warp::post().map(warp::reply);
/// ```
pub fn post() -> impl Filter<Extract = (), Error = Rejection> + Copy {
    method_is(|| &Method::POST)
}"""
    source = Source("r", "src/method.rs", "rust", 30, 41, "post", text, 1.0)
    weights = {"post": 2.0, "method": 1.0, "filter": 1.0}
    excerpt = best_excerpt(source, weights)
    assert "method_is(|| &Method::POST)" in excerpt.text
    assert not excerpt.text.startswith("/// ```")  # never opens mid-comment, in its example
