"""Stopping within a deadline (issue 27: SIGTERM with a 32 s answer in flight took 31 s,
and a SIGKILL left the message cut off with no word to the reader).

The real Bolt app over HTTP in front of a Core with a model (the fake OpenAI server,
whose stream is held open: an answer that would never finish by itself). `Core.drain`
is what `codecite serve` runs at SIGTERM (tests/adapters/test_serve_process.py sends the
signal itself): readiness fails first, the server keeps answering (an event is refused
with 503, unclaimed, for Slack to deliver again; a slash command hears that codecite is
restarting), and after the grace the answer in flight ends with one honest line.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.slack.app import build_bot
from adapters.slack.serve import start_http
from bot.config import Settings, load_file_config
from bot.core import Core
from bot.runtime.drain import RESTARTED
from bot.runtime.queue import QueueClosed
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.slack_driver import CHANNEL, SIGNING_SECRET, Driver, replies_in

QUESTION = "where do we retry failed webhooks?"
GRACE = 1.0


@pytest.fixture
def served(
    slack: FakeSlack, config_toml: Path, indexed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Core, FakeOpenAI, Driver]]:
    with FakeOpenAI() as openai:
        env = {
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "CODECITE_SLACK_API_URL": slack.base_url,
            "CODECITE_CONFIG": str(config_toml),
            "OPENAI_API_KEY": "sk-test-shutdown-01",
            "OPENAI_BASE_URL": openai.base_url,
            "CODECITE_EMBED_MODEL": "none",
            "CODECITE_SHUTDOWN_GRACE": str(GRACE),
            "CODECITE_READY_CACHE_SECONDS": "0",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        openai.chat_reply = lambda body: " ".join(f"word{n}" for n in range(200)) + "."
        settings = Settings()
        shutil.copytree(indexed_home, settings.home)
        core = Core.from_settings(settings, load_file_config(config_toml))
        bot = build_bot(core)
        server = start_http(bot, host="127.0.0.1", port=0)
        try:
            yield core, openai, Driver(slack, server.url())
        finally:
            server.stop()
            bot.close()
            core.close()


def test_an_answer_in_flight_at_the_deadline_ends_with_one_honest_line(
    served: tuple[Core, FakeOpenAI, Driver], slack: FakeSlack
) -> None:
    core, openai, driver = served
    held = openai.hold_stream_next(after_chunks=8)  # a model that never finishes this one
    try:
        asked = driver.say(QUESTION)
        slack.wait_for(lambda: replies_in(slack, CHANNEL, asked["ts"]), timeout=30)  # shown
        assert core.readiness() == ""
        finished: list[bool] = []
        stopping = threading.Thread(target=lambda: finished.append(core.drain()))
        stopping.start()
        slack.wait_for(lambda: core.draining or None)
        assert core.readiness() == "shutting down"  # a load balancer looks elsewhere first
        # Still served while it drains: nothing is refused at the socket.
        late = slack.add_message(CHANNEL, "UASKER", "<@UBOT0001> and who calls it?")
        mention = {"type": "app_mention", "user": "UASKER", "text": late["text"]}
        status, _ = driver.event({**mention, "ts": late["ts"], "channel": CHANNEL})
        assert status == 503  # unclaimed: Slack delivers it again, elsewhere or later
        status, body, _ = driver.command("ask how do retries back off?")
        assert status == 200 and QueueClosed.user_message in body
        stopping.join(timeout=GRACE + 15)
        assert not stopping.is_alive() and finished == [False]
    finally:
        held.set()
    [answer] = replies_in(slack, CHANNEL, asked["ts"])
    final = slack.wait_for(
        lambda: [v for v in slack.views_of(answer["ts"]) if v.method == "chat.update"], timeout=30
    )
    shown = final[-1].text
    body = shown.split(RESTARTED)[0]  # the answer's text; its sources and buttons follow
    assert shown.count(RESTARTED) == 1 and body.startswith("word0"), shown
    assert body.rstrip().endswith("word6")  # what was written stays, ended by the one line
    assert "incident" not in shown and "cut off" not in shown
    assert not replies_in(slack, CHANNEL, late["ts"])  # never answered here


def test_answers_that_finish_within_the_grace_are_left_whole(
    served: tuple[Core, FakeOpenAI, Driver], slack: FakeSlack
) -> None:
    core, openai, driver = served
    openai.chat_reply = lambda body: "Retries back off exponentially."
    asked = driver.say(QUESTION)
    slack.wait_for(lambda: replies_in(slack, CHANNEL, asked["ts"]), timeout=30)
    assert core.drain(grace=30) is True
    [answer] = replies_in(slack, CHANNEL, asked["ts"])
    assert RESTARTED not in str(answer.get("text"))
