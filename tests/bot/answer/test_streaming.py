"""Streamed answers through the real openai SDK against the fake server: pieces arrive
while the model is still writing, every visible prefix is safe, and the final Answer is
the one `ask` gives."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from bot.answer.safety import ZWSP
from bot.answer.streaming import CUT_OFF, AnswerStream, SafeRelease, stable_cut
from bot.config import FileConfig, LimitsConfig
from bot.context import Context
from bot.core import CLI, Core
from bot.errors import RateLimited
from bot.models import Answer
from tests.servers.openai_fake import FakeOpenAI
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop
from tests.support.streaming import each_char, streaming_core

QUESTION = "how are failed webhook deliveries retried with backoff?"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def core(fake: FakeOpenAI, make_repo) -> Core:
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    return streaming_core(fake, repo)


def visible_prefixes(stream: AnswerStream) -> list[str]:
    """What a consumer shows after each piece: the concatenation so far."""
    shown, seen = "", []
    for piece in stream:
        shown += piece
        seen.append(shown)
    return seen


def reply(text: str) -> object:
    return lambda body: text


# -- the cut, on its own ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "stable"),
    [
        ("one two", "one"),
        ("one two ", "one two"),
        ("see <!chan", "see"),
        ("see <!channel> now", "see <!channel>"),
        ("a [docs](https://x.example/y", "a"),
        ("a [1", "a"),
        ("a [1] b", "a [1]"),
        ("", ""),
        ("word", ""),
    ],
)
def test_stable_cut_holds_what_may_still_change(raw: str, stable: str) -> None:
    assert raw[: stable_cut(raw)] == stable


def test_shown_text_is_never_taken_back() -> None:
    release = SafeRelease(lambda raw: raw.upper() if "!" in raw else raw)
    assert release.feed("calm words ") == "calm words"
    assert release.feed("now! shouting ") == ""  # the render rewrote what was shown: held
    assert release.shown == "calm words"


def test_a_long_answer_is_rendered_a_bounded_number_of_times() -> None:
    """Each render reads the whole prefix: once a word would be quadratic in the length."""
    renders: list[int] = []

    def render(raw: str) -> str:
        renders.append(len(raw))
        return raw

    release = SafeRelease(render, clock=lambda: 0.0)  # time stands still: only growth counts
    words = [f"word{i} " for i in range(1100)]  # under the release limit
    shown = "".join(release.feed(w) for w in words)
    assert shown == release.shown == "".join(words).rstrip()[: len(shown)]
    assert len(shown) > 0.9 * len("".join(words))  # all but a tail under a sixteenth
    assert len(renders) < 150, len(renders)  # was one render per word (1100)
    assert renders == sorted(renders)  # never the same prefix twice


def test_a_slow_answer_still_shows_each_interval() -> None:
    now = [0.0]
    release = SafeRelease(lambda raw: raw, clock=lambda: now[0])
    release.feed("x" * 2000 + " ")  # a long shown text: growth alone would wait for 125 chars
    assert release.feed("one two ") == ""  # not due yet, and no time has passed
    now[0] += 0.25
    assert release.feed("three ") == " one two three"


# -- through the real client and the fake server ---------------------------------------------


def test_the_first_piece_arrives_while_the_model_is_still_writing(
    core: Core, fake: FakeOpenAI
) -> None:
    fake.chat_reply = reply("Refunds are issued by the billing module [1]. " * 6)
    release = fake.hold_stream_next(after_chunks=6)
    timer = threading.Timer(20, release.set)  # a failing test must not hang
    timer.start()
    try:
        stream = core.ask_stream(QUESTION, CLI)
        first = next(stream)
        still_held = not release.is_set()
        release.set()
        rest = "".join(stream)
    finally:
        timer.cancel()
    assert still_held, "the first piece only came after the fake let the rest go"
    assert first.startswith("Refunds")
    assert first + rest == stream.answer.text


@pytest.mark.parametrize(
    "dangerous",
    [
        "<!channel>",
        "<@U123>",
        "<@U123|bob smith>",
        "<!here|here>",
        "<!subteam^S0123|@core team>",
        "@everyone",
        "@here",
    ],
)
def test_a_mention_split_anywhere_never_shows_unneutralised(
    core: Core, fake: FakeOpenAI, dangerous: str
) -> None:
    text = f"Ask {dangerous} about refunds [1], then {dangerous}."
    fake.chat_reply = reply(text)
    for cut in range(1, len(text)):
        fake.stream_split = lambda t, cut=cut: [t[:cut], t[cut:]]
        for shown in visible_prefixes(core.ask_stream(QUESTION, CLI)):
            assert_no_ping(shown, dangerous)
    fake.stream_split = each_char  # every prefix of the model's text, one at a time
    stream = core.ask_stream(QUESTION, CLI)
    seen = visible_prefixes(stream)
    assert len(seen) > 3, "an answer written char by char should show in several pieces"
    for shown in seen:
        assert_no_ping(shown, dangerous)
    assert seen[-1] == stream.answer.text  # nothing shown had to be taken back
    assert f"@{ZWSP}" in stream.answer.text


def assert_no_ping(shown: str, dangerous: str) -> None:
    assert "<!" not in shown and "<@" not in shown, shown
    if dangerous.startswith("@"):
        assert dangerous not in shown, shown


def test_a_foreign_link_split_across_chunks_never_shows(core: Core, fake: FakeOpenAI) -> None:
    text = (
        "Refunds live in billing [1]. Read [the guide](https://evil.example/guide) "
        "or https://evil.example/raw for more."
    )
    fake.chat_reply = reply(text)
    for split in (each_char, lambda t: [t[:60], t[60:90], t[90:]]):
        fake.stream_split = split
        stream = core.ask_stream(QUESTION, CLI)
        seen = visible_prefixes(stream)
        assert seen, "nothing was shown"
        for shown in seen:
            assert "evil.example" not in shown, shown
        assert "the guide" in stream.answer.text and "(link removed)" in stream.answer.text


def test_a_broken_stream_keeps_the_text_and_ends_with_one_sentence(
    core: Core, fake: FakeOpenAI
) -> None:
    fake.chat_reply = reply("Refunds are issued by the billing module [1] after a check " * 3)
    before = len(fake.bodies("/chat/completions"))
    fake.break_stream_next(after_chunks=12)
    stream = core.ask_stream(QUESTION, CLI)
    shown = "".join(stream)
    answer = stream.answer
    assert shown == answer.text
    assert answer.text.startswith("Refunds are issued")
    assert answer.text.endswith(CUT_OFF) and answer.text.count(CUT_OFF) == 1
    assert len(fake.bodies("/chat/completions")) == before + 1  # no second answer asked for
    assert answer.answer_id, "a cut-off answer is still recorded"


def test_the_streamed_answer_is_the_one_ask_gives(core: Core, fake: FakeOpenAI) -> None:
    fake.stream_split = each_char
    plain = core.ask(QUESTION, CLI)
    stream = core.ask_stream(QUESTION, CLI)
    shown = "".join(stream)
    streamed = stream.answer
    assert shown == streamed.text
    assert comparable(streamed) == comparable(plain)
    assert streamed.citations, "the fake cites every source: the answer must have citations"
    assert streamed.answer_id and streamed.answer_id != plain.answer_id
    bodies = fake.bodies("/chat/completions")
    assert [b.get("stream", False) for b in bodies[-2:]] == [False, True]
    assert [m["role"] for m in bodies[-1]["messages"]] == [
        m["role"] for m in bodies[-2]["messages"]
    ]


def comparable(answer: Answer) -> tuple[object, ...]:
    return answer.text, answer.citations, answer.freshness, answer.usage, answer.mode


def test_without_a_model_the_answer_is_one_piece(make_repo) -> None:
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    core = Core.from_settings()
    core.index_repo(str(repo.path), name="shop")
    stream = core.ask_stream(QUESTION, CLI)
    pieces = list(stream)
    assert pieces == [stream.answer.text]
    assert stream.answer.mode == "extractive" and stream.answer.answer_id


def test_a_streamed_answer_counts_once_against_the_limits(fake: FakeOpenAI, make_repo) -> None:
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    core = streaming_core(fake, repo, FileConfig(limits=LimitsConfig(per_user_per_minute=2)))
    asker = Context(platform="slack", user="U1", channel="C1", guild="T1")
    for _ in range(2):
        stream = core.ask_stream(QUESTION, asker)
        assert "".join(stream) == stream.answer.text and stream.answer.answer_id
    with pytest.raises(RateLimited):
        core.ask_stream(QUESTION, asker)
