"""Slack acknowledgement latency under slow answers: `python -m bench.slack_ack`.

Sends N signed `app_mention` events (from C concurrent senders) to the real
Bolt app over HTTP, with a real Core whose answers are made to take ~2 s, and a
local fake Slack Web API. Reports, per HTTP server:

- ack latency: request sent -> HTTP 200 back (Slack gives up after 3 s);
- first visible progress: request sent -> the 👀 `reactions.add` call;
- answer latency: request sent -> the answer posted in the thread.

The peer row runs the same load through the same handler on a server that
takes one request at a time, as Bolt's `App.start()` development server does,
to show what the threaded server buys.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import percentile
from bench.report import table

SECRET = "bench-signing-secret"
CHANNEL = "C0BENCH"
QUESTION = "where do we retry failed webhooks?"
SOURCE = '''MAX_ATTEMPTS = 5


def retry_failed_webhooks(queue):
    """Retry every failed webhook with exponential backoff."""
    for hook in queue.failed():
        for attempt in range(MAX_ATTEMPTS):
            if hook.deliver():
                break
            hook.wait(2 ** attempt)
'''


def _git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
    }
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _make_core(home: Path, slack_url: str, workers: int, events: int, delay: float) -> Any:
    os.environ.update(
        CODECITE_HOME=str(home),
        SLACK_BOT_TOKEN="xoxb-test-bot-token",
        SLACK_SIGNING_SECRET=SECRET,
        CODECITE_SLACK_API_URL=slack_url,
    )
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODECITE_CONFIG", "SLACK_APP_TOKEN"):
        os.environ.pop(name, None)
    from bot.config import FileConfig, LimitsConfig, Settings
    from bot.core import Core

    # Measure acknowledgements, not quotas: every rate limit off (0 = no limit).
    limits = LimitsConfig(
        workers=workers,
        queue_size=events,
        per_user_per_minute=0,
        per_channel_per_minute=0,
        daily_answers=0,
    )
    core = Core.from_settings(Settings(), FileConfig(limits=limits))
    repo = home.parent / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "webhooks.py").write_text(SOURCE, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    core.index_repo(str(repo), name="shop")
    real_ask = core.ask

    def slow_ask(*args: Any, **kwargs: Any) -> Any:
        time.sleep(delay)  # stands in for a model that takes `delay` seconds
        return real_ask(*args, **kwargs)

    core.ask = slow_ask
    return core


def _post(url: str, body: dict[str, Any]) -> float:
    raw = json.dumps(body)
    ts = str(int(time.time()))
    sig = hmac.new(SECRET.encode(), f"v0:{ts}:{raw}".encode(), hashlib.sha256).hexdigest()
    request = urllib.request.Request(url, data=raw.encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("X-Slack-Request-Timestamp", ts)
    request.add_header("X-Slack-Signature", f"v0={sig}")
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=30) as resp:
        resp.read()
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}")
    return time.monotonic() - started


def _load(slack: Any, url: str, events: int, concurrency: int) -> dict[str, list[float]]:
    from tests.servers.slack_fake import BOT_USER_ID, TEAM_ID

    sent: dict[str, float] = {}
    acks: list[float] = []

    def one(i: int) -> None:
        msg = slack.add_message(CHANNEL, f"U{i:05d}", f"<@{BOT_USER_ID}> {QUESTION}")
        event = {"type": "app_mention", "user": f"U{i:05d}", "text": msg["text"], "ts": msg["ts"]}
        body = {"type": "event_callback", "team_id": TEAM_ID, "event_id": f"Ev{i}-{msg['ts']}"}
        body["event"] = {**event, "channel": CHANNEL, "event_ts": msg["ts"]}
        sent[msg["ts"]] = time.monotonic()
        acks.append(_post(url, body))

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(events)))
    slack.wait_for(lambda: len(slack.calls_to("reactions.add")) >= events, timeout=120)
    slack.wait_for(lambda: len(_answers(slack)) >= events, timeout=600)
    reacted = [c.at - sent[c.params["timestamp"]] for c in slack.calls_to("reactions.add")]
    answered = [m_at - sent[ts] for ts, m_at in _answers(slack).items()]
    return {"ack": acks, "reaction": reacted, "answer": answered}


def _answers(slack: Any) -> dict[str, float]:
    """thread ts -> when its first answer was posted."""
    firsts: dict[str, float] = {}
    for call in slack.calls_to("chat.postMessage"):
        firsts.setdefault(str(call.params.get("thread_ts")), call.at)
    return firsts


def _threaded(app: Any) -> tuple[str, Callable[[], None]]:
    from adapters.slack.http_server import SlackHTTPServer

    server = SlackHTTPServer(app, host="127.0.0.1", port=0)
    server.start()
    return server.url(), server.stop


def _single_threaded(app: Any) -> tuple[str, Callable[[], None]]:
    """The same handler on a one-request-at-a-time server, as Bolt's `App.start()` runs."""
    from http.server import HTTPServer

    from adapters.common.http_limits import HTTPLimits
    from adapters.common.http_routes import routed_handler
    from adapters.slack.http_server import EVENTS_PATH, slack_route

    handler = routed_handler([slack_route(app)], HTTPLimits(), "bench")
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_port}{EVENTS_PATH}", stop


def run(name: str, serve: Callable[[Any], Any], args: argparse.Namespace) -> list[Any]:
    from adapters.slack.app import build_bot
    from tests.servers.slack_fake import FakeSlack

    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as slack:
        core = _make_core(Path(tmp) / "home", slack.base_url, args.workers, args.events, args.delay)
        bot = build_bot(core)
        url, stop = serve(bot.app)
        try:
            times = _load(slack, url, args.events, args.concurrency)
        finally:
            stop()
            bot.close()
            core.close()
    ms = {k: [v * 1000 for v in vs] for k, vs in times.items()}
    return [
        name,
        len(ms["ack"]),
        percentile(ms["ack"], 0.5),
        percentile(ms["ack"], 0.95),
        max(ms["ack"]),
        percentile(ms["reaction"], 0.5),
        percentile(ms["reaction"], 0.95),
        percentile(ms["answer"], 0.5),
        percentile(ms["answer"], 0.95),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10, help="concurrent senders")
    parser.add_argument("--delay", type=float, default=2.0, help="seconds each answer takes")
    parser.add_argument("--workers", type=int, default=16, help="answer worker threads")
    parser.add_argument("--no-peer", action="store_true", help="skip the single-threaded row")
    args = parser.parse_args(argv)
    rows = [run("codecite threaded HTTP", _threaded, args)]
    if not args.no_peer:
        rows.append(run("single-threaded (App.start)", _single_threaded, args))
    header = ["server", "events", "ack p50 ms", "ack p95 ms", "ack max ms"]
    header += ["👀 p50 ms", "👀 p95 ms", "answer p50 ms", "answer p95 ms"]
    print(
        f"{args.events} mentions, {args.concurrency} concurrent senders, answers take "
        f"{args.delay:.1f} s, {args.workers} answer workers"
    )
    print(table(header, rows))
    if len(rows) == 2 and rows[0][3]:
        print(f"ack p95 ratio (peer / codecite): {rows[1][3] / rows[0][3]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
