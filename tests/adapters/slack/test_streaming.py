"""Slack answers appear as they are written: the real Bolt app over HTTP, the real
WebClient against the strict fake Slack, the real openai client against the fake model.

What a person sees is read from the fake's `views` (every state of every bot message)
and from every call's parameters, so text that showed only for a moment counts too.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.render import render_answer
from bot.answer.streaming import CUT_OFF
from bot.config import Settings, load_file_config
from bot.core import Core
from bot.models import Answer, Citation
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.servers.slack_stream_fake import View
from tests.support.slack_driver import (
    CHANNEL,
    SIGNING_SECRET,
    Driver,
    Recorded,
    Running,
    patch_answers,
    replies_in,
)
from tests.support.streaming import KEY

QUESTION = "how are failed webhook deliveries retried?"
ANSWER = (
    "Failed deliveries are retried with exponential backoff [1]. "
    "Each attempt waits twice as long as the one before it [1]. "
    "After five attempts the delivery is given up and the failure is logged [1]."
)


def words(text: str) -> list[str]:
    """A stream split: one SSE chunk per word (with its trailing space)."""
    return re.findall(r"\S+\s*", text)


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.chat_reply = lambda body: ANSWER
        fake.stream_split = words
        fake.stream_interval = 0.05  # about 1.5 s for the whole answer
        yield fake


@pytest.fixture
def stream_env() -> str:
    return "1"


@pytest.fixture
def core(
    slack: FakeSlack,
    model: FakeOpenAI,
    config_toml: Path,
    indexed_home: Path,
    stream_env: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Core]:
    """As conftest's core, with a model: the real OpenAIChat on the fake server."""
    env = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "CODECITE_SLACK_API_URL": slack.base_url,
        "CODECITE_CONFIG": str(config_toml),
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": model.base_url,
        "CODECITE_EMBED_MODEL": "none",
        "CODECITE_STREAM": stream_env,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    shutil.copytree(indexed_home, settings.home)
    core = Core.from_settings(settings, load_file_config(config_toml))
    yield core
    core.close()


def settle(running: Running) -> None:
    """Finish every accepted answer: afterwards nothing else is posted."""
    running.server.stop()
    running.bot.close()


def released_later(event: threading.Event) -> threading.Timer:
    timer = threading.Timer(20, event.set)  # a failing test must not hang on a held model
    timer.start()
    return timer


def views_in(slack: FakeSlack, thread_ts: str) -> list[View]:
    ours = {m["ts"] for m in replies_in(slack, CHANNEL, thread_ts)}
    return [v for v in slack.views if v.ts in ours]


def everything_sent(slack: FakeSlack) -> str:
    """Every view and every call's parameters: all a person could ever have seen."""
    seen = [v.text for v in slack.views]
    seen += [json.dumps(c.params, ensure_ascii=False) for c in slack.calls]
    return "\n".join(seen)


def final(slack: FakeSlack, thread_ts: str) -> dict[str, Any]:
    [reply] = replies_in(slack, CHANNEL, thread_ts)
    return reply


def keeping(answers: list[Answer]) -> Any:
    def keep(answer: Answer) -> Answer:
        answers.append(answer)
        return answer

    return keep


# -- the stream itself -----------------------------------------------------------------------


def test_text_shows_in_the_thread_while_the_model_is_still_writing(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running
) -> None:
    release = model.hold_stream_next(after_chunks=8)
    timer = released_later(release)
    try:
        msg = driver.say(QUESTION)
        seen = slack.wait_for(
            lambda: [v for v in views_in(slack, msg["ts"]) if "Failed deliveries" in v.text]
        )
        still_held = not release.is_set()
        eyes_gone = slack.wait_for(lambda: slack.calls_to("reactions.remove"))
        release.set()
    finally:
        timer.cancel()
    assert still_held, "the first text only showed once the model was let go"
    assert "given up" not in seen[0].text  # only what the model had written so far
    assert views_in(slack, msg["ts"])[0].method == "chat.startStream"
    assert eyes_gone[0].params["timestamp"] == msg["ts"]  # 👀 goes once text shows
    settle(running)
    reply = final(slack, msg["ts"])
    assert "given up and the failure is logged" in reply["blocks"][0]["text"]["text"]
    assert [c.ok for c in slack.calls_to("chat.startStream")] == [True]
    assert not slack.calls_to("chat.postMessage")


def test_the_final_message_is_the_whole_answer_with_linked_citations(
    slack: FakeSlack, driver: Driver, core: Core, running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers: list[Answer] = []

    def hosted(answer: Answer) -> Answer:
        cites = tuple(
            Citation(c.repo, c.path, c.start_line, c.end_line, f"https://h.test/{c.path}")
            for c in answer.citations
        )
        kept = Answer(
            answer.text, cites, answer.freshness, mode=answer.mode, answer_id=answer.answer_id
        )
        answers.append(kept)
        return kept

    patch_answers(monkeypatch, core, hosted)
    msg = driver.say(QUESTION)
    slack.wait_for(lambda: answers)
    settle(running)
    [answer] = answers
    [expected] = render_answer(answer, answer_id=answer.answer_id)
    reply = final(slack, msg["ts"])
    assert reply["text"] == expected.text
    assert reply["blocks"] == list(expected.blocks)
    body = reply["blocks"][0]["text"]["text"]
    assert "<https://h.test/shop/webhooks.py|shop/webhooks.py:L" in body
    shown = slack.views_of(reply["ts"])[-1].text
    assert "*Sources*" in shown and "shop main@" in shown and ":+1: Helpful" in shown
    stop = slack.calls_to("chat.stopStream")[0].params
    assert stop["blocks"][-1]["type"] == "actions"  # complete from the stop on
    assert not [c for c in slack.calls if not c.ok]


def test_the_streamed_text_is_the_answer_text(
    slack: FakeSlack, driver: Driver, running: Running, recorded: Recorded
) -> None:
    msg = driver.say(QUESTION)
    settle(running)
    [answer] = recorded.answers
    stopped = [v for v in views_in(slack, msg["ts"]) if v.method == "chat.stopStream"]
    assert stopped and stopped[0].text.startswith(answer.text)
    appended = slack.calls_to("chat.appendStream")
    assert len(appended) <= 4, "one append a second at most, for a 1.5 s answer"


@pytest.mark.parametrize(
    ("dangerous", "cut"),
    [("<!channel>", "<!chan"), ("<@U123>", "<@U1"), ("<@U123|bob>", "<@U123|b")],
)
def test_a_mention_split_across_pieces_never_shows(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running, dangerous: str, cut: str
) -> None:
    text = f"Retries are owned by {dangerous} and the sender [1]. Ask {dangerous} first [1]."
    at = text.index(cut) + len(cut)
    model.chat_reply = lambda body: text
    model.stream_split = lambda t: [t[:at], t[at:]] if t == text else [t]
    release = model.hold_stream_next(after_chunks=2)  # the role chunk, then the first part
    timer = released_later(release)
    try:
        msg = driver.say(QUESTION)
        slack.wait_for(lambda: views_in(slack, msg["ts"]))  # the text before the cut shows
        release.set()
    finally:
        timer.cancel()
    settle(running)
    seen = everything_sent(slack)
    assert "Retries are owned by" in seen
    assert "<!channel" not in seen and "<@U1" not in seen
    assert "@\u200b" in final(slack, msg["ts"])["blocks"][0]["text"]["text"]


def test_a_link_that_is_not_a_permalink_never_shows(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running
) -> None:
    text = (
        "Retries live in the sender [1]. Read [the guide](https://evil.example/guide) "
        "or https://evil.example/raw for more [1]."
    )
    model.chat_reply = lambda body: text
    model.stream_split = lambda t: [t[:50], t[50:75], t[75:]] if t == text else [t]
    release = model.hold_stream_next(after_chunks=3)
    timer = released_later(release)
    try:
        msg = driver.say(QUESTION)
        slack.wait_for(lambda: views_in(slack, msg["ts"]))
        release.set()
    finally:
        timer.cancel()
    settle(running)
    seen = everything_sent(slack)
    assert "evil.example" not in seen
    assert "(link removed)" in final(slack, msg["ts"])["blocks"][0]["text"]["text"]


def test_a_citation_of_no_retrieved_source_never_shows(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running
) -> None:
    text = "Deliveries are retried [1] with backoff [42] until they give up [1]."
    at = text.index("[42]") + 2
    model.chat_reply = lambda body: text
    model.stream_split = lambda t: [t[:at], t[at:]] if t == text else [t]
    release = model.hold_stream_next(after_chunks=2)  # the role chunk, then the first part
    timer = released_later(release)
    try:
        msg = driver.say(QUESTION)
        slack.wait_for(lambda: views_in(slack, msg["ts"]))
        release.set()
    finally:
        timer.cancel()
    settle(running)
    seen = everything_sent(slack)
    assert "[42]" not in seen and "[4" not in seen
    assert "until they give up" in final(slack, msg["ts"])["blocks"][0]["text"]["text"]


def test_a_broken_model_stream_leaves_one_message_ending_with_one_sentence(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running
) -> None:
    model.break_stream_next(after_chunks=12)
    msg = driver.say(QUESTION)
    settle(running)
    reply = final(slack, msg["ts"])  # one message in the thread, no second answer
    body = reply["blocks"][0]["text"]["text"]
    assert body.startswith("Failed deliveries are retried")
    assert body.endswith(CUT_OFF) and body.count(CUT_OFF) == 1
    assert "given up" not in body
    assert not slack.calls_to("chat.postMessage")
    assert "Traceback" not in everything_sent(slack)


# -- when Slack will not stream, or slows us down --------------------------------------------


@pytest.mark.parametrize("refusal", ["not_allowed", "method_deprecated"])
def test_a_workspace_that_refuses_streaming_gets_one_message_edited_once_a_second(
    slack: FakeSlack, driver: Driver, running: Running, recorded: Recorded, refusal: str
) -> None:
    slack.refuse_streaming = refusal
    msg = driver.say(QUESTION)
    # The first answer's last edit (the only one with blocks): it is complete.
    slack.wait_for(lambda: [c for c in slack.calls_to("chat.update") if c.params.get("blocks")])
    second = driver.say("and how long between attempts?")
    settle(running)
    posts = [c for c in slack.calls_to("chat.postMessage") if c.ok]
    assert [c.params["thread_ts"] for c in posts] == [msg["ts"], second["ts"]]
    # The refusal is remembered: the second answer does not ask again.
    assert [c.error for c in slack.calls if c.method == "chat.startStream"] == [refusal]
    first_ts = final(slack, msg["ts"])["ts"]
    edits = [c for c in slack.calls_to("chat.update") if c.params["ts"] == first_ts]
    assert len(edits) >= 2, "a 1.5 s answer is edited at least once before the last edit"
    times = [posts[0].at] + [c.at for c in edits]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.95, gaps
    answer = recorded.answers[0]
    [expected] = render_answer(answer, answer_id=answer.answer_id)
    reply = final(slack, msg["ts"])
    # "indexed just now" may have become "1 min ago" between the post and this rendering
    assert _timeless(reply["blocks"]) == _timeless(list(expected.blocks))
    assert _timeless(reply["text"]) == _timeless(expected.text)
    assert not [c for c in slack.calls if not c.ok and c.method != "chat.startStream"]


@pytest.mark.parametrize("failures", [1, 3])  # within the client's two retries, and past them
def test_rate_limited_appends_slow_the_stream_and_lose_nothing(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running, failures: int
) -> None:
    model.stream_interval = 0.1  # about 3 s: several appends
    slack.fail_next(429, count=failures, retry_after=1, method_or_path="chat.appendStream")
    msg = driver.say(QUESTION)
    settle(running)
    limited = [c for c in slack.calls if c.method == "chat.appendStream" and c.status == 429]
    assert len(limited) == failures
    stopped = [v for v in views_in(slack, msg["ts"]) if v.method == "chat.stopStream"]
    assert stopped and stopped[0].text.startswith(ANSWER.replace("[1]", "").split(" backoff")[0])
    body = final(slack, msg["ts"])["blocks"][0]["text"]["text"]
    for sentence in ("exponential backoff", "twice as long", "failure is logged"):
        assert sentence in body
    assert len(replies_in(slack, CHANNEL, msg["ts"])) == 1
    assert not slack.calls_to("chat.postMessage")


# -- every way of asking ---------------------------------------------------------------------


@pytest.mark.parametrize("stream_env", ["0"])
def test_with_streaming_off_the_whole_answer_is_posted_once(
    slack: FakeSlack, driver: Driver, running: Running, recorded: Recorded
) -> None:
    msg = driver.say(QUESTION)
    settle(running)
    assert not [c for c in slack.calls if c.method.endswith("Stream")]
    assert not slack.calls_to("chat.update")
    [post] = slack.calls_to("chat.postMessage")
    answer = recorded.answers[0]
    [expected] = render_answer(answer, answer_id=answer.answer_id)
    assert post.params["text"] == expected.text
    assert final(slack, msg["ts"])["blocks"] == list(expected.blocks)


def test_the_slash_command_streams_under_the_quoted_question(
    slack: FakeSlack, driver: Driver, model: FakeOpenAI, running: Running
) -> None:
    release = model.hold_stream_next(after_chunks=8)
    timer = released_later(release)
    try:
        assert driver.command(f"ask {QUESTION}")[0] == 200
        seen = slack.wait_for(lambda: [v for v in slack.views if "Failed deliveries" in v.text])
        still_held = not release.is_set()
        release.set()
    finally:
        timer.cancel()
    assert still_held
    first = slack.views_of(seen[0].ts)[0]
    assert first.method == "chat.postMessage"
    assert first.text.startswith("*<@UASKER> asked:*\n> " + QUESTION)
    settle(running)
    [top] = [m for m in slack.bot_posts(CHANNEL) if "thread_ts" not in m]
    assert top["ts"] == first.ts
    assert top["text"].startswith("*<@UASKER> asked:*")
    assert "failure is logged" in top["text"] and top["blocks"][-1]["type"] == "actions"
    assert len(slack.bot_posts(CHANNEL)) == 1


def test_a_follow_up_in_the_thread_streams_with_the_conversation(
    slack: FakeSlack, driver: Driver, running: Running, recorded: Recorded
) -> None:
    msg = driver.say(QUESTION)
    slack.wait_for(
        lambda: [c for c in slack.calls_to("chat.update") if c.ok]
    )  # the first answer is complete
    driver.say("and how long between attempts?", thread_ts=msg["ts"], mention=False)
    settle(running)
    starts = slack.calls_to("chat.startStream")
    assert [c.params["thread_ts"] for c in starts] == [msg["ts"], msg["ts"]]
    assert all(c.params["recipient_user_id"] == "UASKER" for c in starts)
    _, _, conversation = recorded.asks[1]
    assert [t.role for t in conversation] == ["user", "assistant"]
    assert "failure is logged" in conversation[1].text
    assert len(replies_in(slack, CHANNEL, msg["ts"])) == 2


def test_a_flat_dm_is_answered_in_one_message_edited_as_it_is_written(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    driver.say(QUESTION, channel="D0DM", channel_type="im", mention=False)
    settle(running)
    assert not slack.calls_to("chat.startStream")  # a stream is always a thread reply
    [post] = slack.calls_to("chat.postMessage")
    assert post.params.get("thread_ts") is None
    [reply] = slack.bot_posts("D0DM")
    assert "failure is logged" in reply["text"] and reply["blocks"][-1]["type"] == "actions"
    assert len(slack.calls_to("chat.update")) >= 2


def _timeless(sent: Any) -> Any:
    """What was sent, with each freshness's "indexed ... ago" left out (it moves with time)."""
    return re.sub(r"indexed (just now|\d+ (min|h|d) ago)", "indexed <when>", json.dumps(sent))
