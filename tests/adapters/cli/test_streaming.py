"""`codecite ask` and `codecite chat` print the answer as it is written on a terminal,
and the whole answer at once when piped; the model is the fake OpenAI server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.openai_fake import FakeOpenAI
from tests.support.cli import run_cli
from tests.support.gitrepo import GitRepo
from tests.support.streaming import run_on_pty

QUESTION = "how are failed webhook deliveries retried with backoff?"
ANSWER = "Failed deliveries are retried with exponential backoff [1] " * 4 + "until they give up."


@pytest.fixture
def home(indexed_shop: tuple[Path, GitRepo]) -> Path:
    return indexed_shop[0]


def words(printed: bytes) -> str:
    """What was printed with line breaks as spaces: the terminal wraps prose at spaces."""
    return " ".join(printed.decode(errors="replace").split())


def text_by(reads: list[tuple[float, bytes]], needle: str) -> float:
    """When `needle` had been printed: the time of the read that completed it."""
    seen = b""
    for at, data in reads:
        seen += data
        if needle in words(seen):
            return at
    raise AssertionError(f"{needle!r} never printed; got {seen.decode(errors='replace')!r}")


@pytest.mark.parametrize(("args", "stdin"), [(("ask", QUESTION), ""), (("chat",), QUESTION + "\n")])
def test_a_terminal_sees_the_answer_as_it_is_written(
    home: Path, env: dict[str, str], fake: FakeOpenAI, args: tuple[str, ...], stdin: str
) -> None:
    fake.stream_interval = 0.04  # about 40 chunks: the whole answer takes 1.5 s or more
    reads = run_on_pty(home, *args, env=env, stdin=stdin)
    first = text_by(reads, "Failed deliveries")
    last = text_by(reads, "until they give up.")
    footer = text_by(reads, "Sources")
    assert last - first > 0.5, "the answer came out all at once"
    assert footer >= last
    printed = words(b"".join(data for _, data in reads))
    assert printed.count("until they give up.") == 1
    assert "shop/webhooks.py" in printed


@pytest.mark.parametrize(
    ("args", "stdin"), [(("ask", QUESTION), None), (("chat",), QUESTION + "\n")]
)
def test_piped_output_is_the_whole_answer_once(
    home: Path, fake: FakeOpenAI, args: tuple[str, ...], stdin: str | None
) -> None:
    fake.stream_interval = 0.01
    result = run_cli(home, *args, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("until they give up.") == 1  # a pipe is never wrapped
    assert result.stdout.count("Failed deliveries are retried") == 4
    assert "Sources" in result.stdout and "shop/webhooks.py" in result.stdout
    assert "\x1b[" not in result.stdout  # no terminal control codes in a pipe
    assert "searching" not in result.stdout and "searching" not in result.stderr


def test_a_terminal_sees_what_the_bot_does_until_the_answer_replaces_it(
    home: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    reads = run_on_pty(home, "ask", QUESTION, env=env)
    printed = b"".join(data for _, data in reads).decode()
    status = printed.index("searching")
    writing = printed.index("writing the answer from")
    answer = printed.index("Failed deliveries")
    assert status < writing < answer
    # Each status overwrote the last, and the answer starts on an erased line.
    assert printed[:answer].endswith("\r\x1b[2K")
    assert "searching" not in printed[answer:]


def test_a_broken_stream_on_a_terminal_ends_with_one_sentence(
    home: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.break_stream_next(after_chunks=10)
    reads = run_on_pty(home, "ask", QUESTION, env=env)
    printed = b"".join(data for _, data in reads).decode()
    assert "Failed deliveries" in printed
    assert printed.count("The answer was cut off; ask again.") == 1
    assert "Traceback" not in printed


def test_with_streaming_off_a_terminal_gets_the_whole_answer_at_once(
    home: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.stream_interval = 0.04
    reads = run_on_pty(home, "ask", QUESTION, env={**env, "CODECITE_STREAM": "false"})
    first = text_by(reads, "Failed deliveries")
    footer = text_by(reads, "Sources")  # the footer marks the end
    assert footer - first < 0.3, "streaming was off, yet the answer came out piece by piece"
    printed = b"".join(data for _, data in reads).decode()
    assert printed.index("searching") < printed.index("Failed deliveries")
