"""`GET /metrics` on the process's one port, after real work: a Slack mention answered by
a model (the fake OpenAI server, streamed), a failure the user was told of, a push
that queued a job and the runner that ran it. Read back with prometheus_client's parser.
One process's metrics are shared by every test it runs: each figure is compared with a
reading taken before."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from adapters.slack.app import build_bot
from adapters.slack.serve import start_http
from bot.config import Settings, load_file_config
from bot.core import CLI, Core
from bot.runtime import metrics
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.metrics import grew, scrape, value
from tests.support.slack_driver import CHANNEL, SIGNING_SECRET, Driver, replies_in

QUESTION = "where do we retry failed webhooks?"


@pytest.fixture
def served(
    slack: FakeSlack, config_toml: Path, indexed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Core, FakeOpenAI, Driver, str]]:
    """A Slack process (HTTP mode) with a model, metrics on, as `codecite serve` has them."""
    with FakeOpenAI() as openai:
        env = {
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "CODECITE_SLACK_API_URL": slack.base_url,
            "CODECITE_CONFIG": str(config_toml),
            "OPENAI_API_KEY": "sk-test-metrics-0123",
            "OPENAI_BASE_URL": openai.base_url,
            "CODECITE_EMBED_MODEL": "none",
        }
        for name, value_ in env.items():
            monkeypatch.setenv(name, value_)
        settings = Settings()
        shutil.copytree(indexed_home, settings.home)
        core = Core.from_settings(settings, load_file_config(config_toml))
        metrics.enable()
        metrics.gauges(core.gauges)
        bot = build_bot(core)
        server = start_http(bot, host="127.0.0.1", port=0)
        try:
            yield core, openai, Driver(slack, server.url()), server.url("/metrics")
        finally:
            server.stop()
            bot.close()
            core.close()


def test_a_streamed_answer_and_a_failure_are_counted(
    served: tuple[Core, FakeOpenAI, Driver, str], slack: FakeSlack
) -> None:
    _, _, driver, url = served
    content_type, before = scrape(url)
    assert content_type.startswith("text/plain; version=")
    msg = driver.say(QUESTION)
    slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]), timeout=30)
    failed = driver.say("why " * 4000)  # longer than a question may be: one sentence back
    [reply] = slack.wait_for(lambda: replies_in(slack, CHANNEL, failed["ts"]), timeout=60)
    assert "incident" in reply["text"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _, after = scrape(url)
        if grew(before, after, "codecite_errors_total") >= 1:
            break
        time.sleep(0.1)
    assert grew(before, after, "codecite_questions_total", platform="slack") == 1
    assert grew(before, after, "codecite_answers_total", platform="slack", mode="llm") == 1
    assert grew(before, after, "codecite_answer_seconds_count", platform="slack") == 1
    assert grew(before, after, "codecite_answer_first_text_seconds_count", platform="slack") == 1
    assert grew(before, after, "codecite_errors_total", kind="QuestionError") == 1
    assert grew(before, after, "codecite_model_request_seconds_count", kind="chat") == 1
    assert grew(before, after, "codecite_model_tokens_total", kind="chat", type="prompt") > 0
    assert grew(before, after, "codecite_model_tokens_total", type="completion") > 0
    assert grew(before, after, "codecite_store_request_seconds_count", store="sqlite") > 0
    assert ("codecite_answer_queue_running", frozenset()) in after  # read at each scrape


def test_a_queued_job_is_seen_waiting_then_run(
    served: tuple[Core, FakeOpenAI, Driver, str],
) -> None:
    core, _, _, url = served
    _, before = scrape(url)
    admin = replace(CLI, platform="slack", user="UADMIN")
    later = core.reindex("shop", admin)  # a chat `reindex`: a job for the scheduler's runner
    _, waiting = scrape(url)
    assert value(waiting, "codecite_ingest_jobs_queued") == 1
    runner = core.job_runner()
    runner.start()
    try:
        assert "shop" in later.result(timeout=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            _, after = scrape(url)
            if grew(before, after, "codecite_jobs_total") >= 1:
                break
            time.sleep(0.1)
    finally:
        runner.stop()
    assert grew(before, after, "codecite_jobs_total", outcome="ok") == 1
    assert grew(before, after, "codecite_job_seconds_count", outcome="ok") == 1
    assert grew(before, after, "codecite_ingests_total", trigger="slack command", outcome="ok") == 1
    assert value(after, "codecite_ingest_jobs_queued") == 0
