"""What the screen shows, byte for byte: answer and error text that looks like markup, paths
with underscores and lists, on a real terminal (a pty of known width) and piped.

The model is the fake OpenAI server, so the answer text is known; the expected outputs
below are written out in full. Only the answer's time, token counts and age vary from
run to run, and only those are masked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.gitrepo import GitRepo
from tests.support.terminal import TerminalSession

QUESTION = "how are failed webhooks retried?"
ANSWER = (
    "Retries live in `WebhookSender.retry_failed_webhooks` [1]; the package is "
    "shop/__init__.py, run as __main__.py.\n"
    "Markup stays text: [bold]not bold[/bold], /map [repo], [[repos]], :id: and **stars**.\n"
    "\n"
    "- first item about shop/webhooks.py, long enough to wrap under its own text\n"
    "- second item\n"
    "  1. a nested step, also long enough to wrap under its number\n"
    "```\n"
    "[x] = __y__  # code is never wrapped, however long its line is: it is copied whole\n"
    "```\n"
)
# The answer as written (the citation marker [1] becomes its lines), then the footer.
PIPED = """\
Retries live in `WebhookSender.retry_failed_webhooks` (shop/webhooks.py:L18-L28); \
the package is shop/__init__.py, run as __main__.py.
Markup stays text: [bold]not bold[/bold], /map [repo], [[repos]], :id: and **stars**.

- first item about shop/webhooks.py, long enough to wrap under its own text
- second item
  1. a nested step, also long enough to wrap under its number
```
[x] = __y__  # code is never wrapped, however long its line is: it is copied whole
```

Sources
  shop/webhooks.py:L18-L28  (shop) · last changed SHA8 (DATE)

shop main@SHA, indexed WHEN
llm answer in TIME; tokens USAGE
"""
# The same on a 60-column terminal: prose wrapped at spaces, lists under their text.
SCREEN = """\
Retries live in `WebhookSender.retry_failed_webhooks`
(shop/webhooks.py:L18-L28); the package is shop/__init__.py,
run as __main__.py.
Markup stays text: [bold]not bold[/bold], /map [repo],
[[repos]], :id: and **stars**.

- first item about shop/webhooks.py, long enough to wrap
  under its own text
- second item
  1. a nested step, also long enough to wrap under its
     number
```
[x] = __y__  # code is never wrapped, however long its line is: it is copied whole
```

\x1b[1mSources\x1b[0m
\x1b[2m  shop/webhooks.py:L18-L28  (shop) · last changed SHA8\x1b[0m
\x1b[2m    (DATE)\x1b[0m

\x1b[2mshop main@SHA, indexed WHEN\x1b[0m
\x1b[2mllm answer in TIME; tokens USAGE\x1b[0m
"""
STATUS = re.compile(r"^(?:\r\x1b\[2K(?:\x1b\[2m[^\x1b]*\x1b\[0m)?)+")


@pytest.fixture
def shop(indexed_shop: tuple[Path, GitRepo]) -> tuple[Path, str]:
    home, repo = indexed_shop
    return home, repo.head()[:7]


def masked(output: str, sha: str) -> str:
    """The output with what varies between runs named: commit, age, time, token counts."""
    output = output.replace(f"main@{sha}", "main@SHA")
    output = re.sub(r"last changed [0-9a-f]{8}", "last changed SHA8", output)
    output = re.sub(r"\(\d{4}-\d{2}-\d{2}\)", "(DATE)", output)
    output = re.sub(r"indexed (just now|\d+ min ago)", "indexed WHEN", output)
    return re.sub(r"in \d+\.\d\ds; tokens \d+ in / \d+ out", "in TIME; tokens USAGE", output)


def test_piped_output_is_the_answer_exactly_as_written(shop: tuple[Path, str]) -> None:
    home, sha = shop
    result = run_cli(home, "ask", QUESTION, columns=40)  # COLUMNS does not wrap a pipe
    assert result.returncode == 0, result.stderr
    assert masked(result.stdout, sha) == PIPED
    assert result.stderr == ""


@pytest.mark.parametrize("stream", ["true", "false"])
def test_a_terminal_shows_the_same_text_wrapped_to_its_width(
    shop: tuple[Path, str], env: dict[str, str], stream: str
) -> None:
    """Streamed piece by piece or printed whole, the screen ends up the same."""
    home, sha = shop
    env = {**env, "CODECITE_STREAM": stream}
    with TerminalSession(home, "ask", QUESTION, columns=60, env=env) as term:
        assert term.finish() == 0
    screen = term.text.replace("\r\n", "\n")
    status = STATUS.match(screen)
    # What it did first ("searching…", "reading 2 sources…"), each status erasing the last,
    # the last erased before the answer's first text.
    assert status is not None and status.group(0).startswith("\r\x1b[2K\x1b[2msearching ")
    assert masked(screen[status.end() :], sha) == SCREEN


def test_an_error_is_one_line_of_literal_text_on_a_terminal_and_in_a_pipe(tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = "error: No repositories to schedule: list them as [[repos]] in codecite.toml.\n"
    piped = run_cli(home, "schedule", columns=30)
    assert (piped.returncode, piped.stdout, piped.stderr) == (2, "", expected)
    with TerminalSession(home, "schedule", columns=30) as term:
        assert term.finish() == 2
    assert term.text == expected.replace("\n", "\r\n")  # not wrapped at 30 columns


def test_map_and_search_keep_dunder_paths(tmp_path: Path, make_repo) -> None:
    repo: GitRepo = make_repo("pkg")
    repo.write("src/pkg/json/__init__.py", 'def dumps_marker(obj):\n    """[[repos]] :id:"""\n')
    repo.write("src/pkg/__main__.py", "from pkg.json import dumps_marker\n")
    repo.commit("init")
    home = tmp_path / "home"
    assert run_cli(home, "index", str(repo.path)).returncode == 0
    tree = run_cli(home, "map", "pkg").stdout
    assert "    __init__.py\n" in tree and "__main__.py" in tree
    hits = run_cli(home, "search", "dumps_marker", "--top-k", "1").stdout
    assert re.fullmatch(r" *\d\.\d{4}  pkg: src/pkg/json/__init__\.py:L1-L2  dumps_marker\n", hits)
    answer = run_cli(home, "ask", "where is dumps_marker defined?").stdout
    assert '"""[[repos]] :id:"""' in answer and "src/pkg/json/__init__.py:L1-L2" in answer
