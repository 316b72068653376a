"""Which repositories each kind of Slack conversation may see, through the real Bolt app.

Every conversation kind (public and private channel, im, mpim, a channel
shared with another organisation, and a thread in each) x asker on or off
`dm_allowlist` x conversation mapped or not x `default_scope` set or not. The
app learns each kind from `conversations.info` on the fake Web API, as it must:
app_mention events carry no channel_type, and a private channel and an mpim
both have `G…` ids. The reply is searched for the two repositories' files and
identifiers (shop: webhooks, billing: discounts).

The expected outcome is written out as the rule README states, independently
of the code under test.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import slack_sdk.http_retry.builtin_handlers
import slack_sdk.http_retry.handler
from slack_sdk import WebClient

from adapters.slack.conversations import ConversationTypes
from bot.scope import DM_REFUSED, EXTERNAL_REFUSED, UNKNOWN_REFUSED
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.slack_driver import Driver

# Cites both repositories when both are in scope (and names neither file nor function).
QUESTION = "how do we retry failed webhooks and compute the volume discount of large orders?"
EVIDENCE = {
    "shop": ("shop/webhooks.py", "retry_failed_webhooks"),
    "billing": ("billing/discounts.py", "compute_volume_discount"),
}
ALLOWED, STRANGER = "UOK", "UNO"
# kind -> (Slack's kind, channel_type in message events, shared with another org)
KINDS = {
    "public": ("public", "channel", False),
    "private": ("private", "group", False),
    "im": ("im", "im", False),
    "mpim": ("mpim", "mpim", False),
    "external": ("public", "channel", True),
}
PREFIX = {"public": "C", "private": "G", "im": "D", "mpim": "G", "external": "C"}


def channel_id(kind: str, mapped: bool) -> str:
    return f"{PREFIX[kind]}0{kind.upper()}{'MAP' if mapped else 'OPEN'}"


def expected(kind: str, mapped: bool, user: str, default_scope: bool) -> set[str] | str:
    """The rule: a mapping decides; else outsiders see nothing, DMs need the allowlist."""
    if mapped:
        return {"billing"}
    if kind == "external":
        return EXTERNAL_REFUSED
    if kind in ("im", "mpim") and user != ALLOWED:
        return DM_REFUSED
    return {"shop"} if default_scope else {"shop", "billing"}


@pytest.fixture(params=[True, False], ids=["default_scope", "no_default_scope"])
def config_toml(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Overrides the shared fixture: every mapped conversation sees billing only."""
    lines = ['admins = ["UADMIN"]', f'dm_allowlist = ["{ALLOWED}"]']
    if request.param:
        lines.append('default_scope = ["shop"]')
    lines.append("[channels]")
    lines += [f'{channel_id(kind, True)} = ["billing"]' for kind in KINDS]
    # One asker asks 20 questions here: this file tests scopes, test_limits tests limits.
    lines += ["[limits]", "per_user_per_minute = 0", "per_channel_per_minute = 0"]
    lines.append("daily_answers = 0")
    path = tmp_path / "codecite.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def unmapped_scope(config_toml: Path) -> set[str]:
    """What an unmapped internal channel sees under this module's two configs."""
    with_default = "default_scope" in config_toml.read_text(encoding="utf-8")
    return {"shop"} if with_default else {"shop", "billing"}


@pytest.fixture
def conversations(slack: FakeSlack) -> list[str]:
    ids = []
    for kind, (slack_kind, _, shared) in KINDS.items():
        for mapped in (True, False):
            ids.append(channel_id(kind, mapped))
            slack.add_conversation(ids[-1], slack_kind, ext_shared=shared)
    return ids


@dataclass
class Cell:
    kind: str
    mapped: bool
    user: str
    threaded: bool

    @property
    def channel(self) -> str:
        return channel_id(self.kind, self.mapped)

    def __str__(self) -> str:
        where = "thread in " if self.threaded else ""
        return f"{self.user} in {where}{self.kind} ({'mapped' if self.mapped else 'unmapped'})"


def ask(slack: FakeSlack, driver: Driver, cell: Cell, question: str = QUESTION) -> str:
    """Ask as Slack would deliver it; the text of everything the bot posted in reply."""
    _, channel_type, shared = KINDS[cell.kind]
    before = len(slack.bot_posts(cell.channel))
    thread_ts = None
    if cell.threaded:
        author = cell.user if cell.kind == "im" else "UCOLLEAGUE"
        thread_ts = slack.add_message(cell.channel, author, "a thread about our code")["ts"]
    driver.say(
        question,
        channel=cell.channel,
        user=cell.user,
        thread_ts=thread_ts,
        mention=cell.kind != "im",  # in an im people just write; Slack sends message.im
        channel_type=channel_type,
        shared=shared,
    )
    posts = slack.wait_for(lambda: (p := slack.bot_posts(cell.channel)[before:]) and p)
    if thread_ts is not None:
        assert all(p.get("thread_ts") == thread_ts for p in posts), f"{cell}: left the thread"
    return "\n".join(f"{p.get('text', '')}\n{json.dumps(p.get('blocks'))}" for p in posts)


def repos_in(reply: str) -> set[str]:
    return {repo for repo, marks in EVIDENCE.items() if any(m in reply for m in marks)}


def test_every_conversation_kind_sees_what_the_rule_says(
    slack: FakeSlack, driver: Driver, conversations: list[str], config_toml: Path
) -> None:
    default_scope = "default_scope" in config_toml.read_text(encoding="utf-8")
    cells = [
        Cell(kind, mapped, user, threaded)
        for kind in KINDS
        for mapped in (True, False)
        for user in (ALLOWED, STRANGER)
        for threaded in (False, True)
    ]
    wrong: list[str] = []
    answered = refused = 0
    for cell in cells:
        want = expected(cell.kind, cell.mapped, cell.user, default_scope)
        reply = ask(slack, driver, cell)
        seen = repos_in(reply)
        if isinstance(want, str):
            refused += 1
            if want not in reply or seen:
                wrong.append(f"{cell}: wanted a refusal, got {sorted(seen)}: {reply[:120]!r}")
        else:
            answered += 1
            if seen != want:
                wrong.append(f"{cell}: wanted {sorted(want)}, got {sorted(seen)}")
    assert wrong == [], f"{len(wrong)} of {len(cells)} cells wrong:\n" + "\n".join(wrong)
    # 5 kinds x mapped/unmapped x 2 askers x top level/thread.
    assert len(cells) == 40
    # Refused: unmapped external (4 cells) and strangers in unmapped im/mpim (2 x 2).
    assert (answered, refused) == (32, 8)
    # One lookup per conversation: threads take their conversation's kind, and it is cached.
    looked_up = sorted(c.params["channel"] for c in slack.calls_to("conversations.info"))
    assert looked_up == sorted(conversations)


def test_a_group_dm_and_a_private_channel_share_the_g_prefix_but_not_the_rule(
    slack: FakeSlack,
    driver: Driver,
    conversations: list[str],
) -> None:
    """Without the lookup both would be G… channels; only the mpim is a DM."""
    private = Cell("private", False, STRANGER, False)
    mpim = Cell("mpim", False, STRANGER, False)
    assert private.channel[0] == mpim.channel[0] == "G"
    assert repos_in(ask(slack, driver, private))
    reply = ask(slack, driver, mpim)
    assert DM_REFUSED in reply and not repos_in(reply)


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """slack_sdk's retry handlers sleep between attempts: record the waits instead."""
    waits: list[float] = []
    instant = SimpleNamespace(sleep=waits.append)
    monkeypatch.setattr(slack_sdk.http_retry.handler, "time", instant)
    monkeypatch.setattr(slack_sdk.http_retry.builtin_handlers, "time", instant)
    return waits


def test_a_failed_lookup_fails_closed_then_is_asked_again(
    slack: FakeSlack,
    driver: Driver,
    conversations: list[str],
    no_sleep: list[float],
    unmapped_scope: set[str],
) -> None:
    open_cell = Cell("public", False, ALLOWED, False)
    slack.fail_next(500, count=3, method_or_path="conversations.info")  # the try and 2 retries
    reply = ask(slack, driver, open_cell)
    assert UNKNOWN_REFUSED in reply and not repos_in(reply)
    assert len(UNKNOWN_REFUSED.splitlines()) == 1
    # Not cached: the next question asks Slack again, and is answered.
    assert repos_in(ask(slack, driver, open_cell)) == unmapped_scope
    # A mapped conversation keeps its mapping even when Slack cannot say what it is.
    mapped = Cell("mpim", True, STRANGER, False)
    slack.fail_next(500, count=3, method_or_path="conversations.info")
    assert repos_in(ask(slack, driver, mapped)) == {"billing"}


def test_a_missing_scope_refuses_and_the_log_names_the_scope(
    slack: FakeSlack,
    driver: Driver,
    conversations: list[str],
    caplog: pytest.LogCaptureFixture,
    unmapped_scope: set[str],
) -> None:
    """An install from before the app asked for mpim:read: group DMs cannot be checked."""
    slack.missing_scopes.add("mpim:read")
    with caplog.at_level(logging.WARNING, logger="adapters.slack.conversations"):
        reply = ask(slack, driver, Cell("mpim", False, ALLOWED, False))
    assert UNKNOWN_REFUSED in reply and not repos_in(reply)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "missing_scope" in logged and "mpim:read" in logged and BOT_TOKEN not in logged
    assert repos_in(ask(slack, driver, Cell("private", False, ALLOWED, False))) == unmapped_scope


def test_a_channel_becoming_shared_is_refused_at_once(
    slack: FakeSlack,
    driver: Driver,
    conversations: list[str],
    unmapped_scope: set[str],
) -> None:
    cell = Cell("public", False, ALLOWED, False)
    assert repos_in(ask(slack, driver, cell)) == unmapped_scope  # looked up and cached: internal
    # Another organisation joins: events now say is_ext_shared_channel, before the cache expires.
    slack.add_conversation(cell.channel, "public", ext_shared=True)
    shared = Cell("external", False, ALLOWED, False)
    before = len(slack.bot_posts(cell.channel))
    driver.say(QUESTION, channel=cell.channel, user=ALLOWED, shared=True)
    reply = json.dumps(slack.wait_for(lambda: (p := slack.bot_posts(cell.channel)[before:]) and p))
    assert EXTERNAL_REFUSED.split(",")[0] in reply and not repos_in(reply), shared
    # channel_shared drops the cached kind, so even a slash command (no envelope) is refused.
    event = {"type": "channel_shared", "connected_team_id": "T0OTHERORG", "channel": cell.channel}
    lookups = len(slack.calls_to("conversations.info"))
    assert driver.event(event)[0] == 200
    _, _, response_url = driver.command(f"ask {QUESTION}", channel=cell.channel, user=ALLOWED)
    [response] = slack.wait_for(lambda: _responses(slack, response_url))
    assert EXTERNAL_REFUSED in response.params["text"] and not repos_in(response.params["text"])
    assert len(slack.calls_to("conversations.info")) == lookups + 1


def _responses(slack: FakeSlack, url: str) -> list[Any]:
    rid = url.rsplit("/", 1)[-1]
    return slack.calls_to(f"response_url:{rid}")


@pytest.mark.parametrize(
    ("kind", "mapped", "user", "outcome"),
    [
        ("public", False, STRANGER, "open"),
        ("mpim", False, STRANGER, DM_REFUSED),
        ("mpim", False, ALLOWED, "open"),
        ("mpim", True, STRANGER, {"billing"}),
        ("im", False, STRANGER, DM_REFUSED),
        ("external", False, ALLOWED, EXTERNAL_REFUSED),
        ("external", True, STRANGER, {"billing"}),
    ],
)
def test_slash_commands_follow_the_same_rule(
    slack: FakeSlack,
    driver: Driver,
    conversations: list[str],
    kind: str,
    mapped: bool,
    user: str,
    outcome: set[str] | str,
    unmapped_scope: set[str],
) -> None:
    if outcome == "open":
        outcome = unmapped_scope
    channel = channel_id(kind, mapped)
    _, _, response_url = driver.command(f"ask {QUESTION}", channel=channel, user=user)
    if isinstance(outcome, str):
        [response] = slack.wait_for(lambda: _responses(slack, response_url))
        assert outcome in response.params["text"] and not repos_in(response.params["text"])
        assert not slack.bot_posts(channel)
        return
    [post] = slack.wait_for(lambda: slack.bot_posts(channel))
    assert repos_in(f"{post['text']}{json.dumps(post['blocks'])}") == outcome


def test_a_slash_command_where_the_bot_cannot_look_is_refused(
    slack: FakeSlack, driver: Driver
) -> None:
    """A DM between two other people: conversations.info says channel_not_found."""
    _, _, response_url = driver.command(f"ask {QUESTION}", channel="D0THEIRS", user=ALLOWED)
    [response] = slack.wait_for(lambda: _responses(slack, response_url))
    assert UNKNOWN_REFUSED in response.params["text"] and not repos_in(response.params["text"])


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def client(slack: FakeSlack) -> Iterator[WebClient]:
    yield WebClient(token=BOT_TOKEN, base_url=slack.base_url)


def test_the_cache_is_bounded_and_expires(slack: FakeSlack, client: WebClient) -> None:
    for channel in ("C1", "C2", "C3"):
        slack.add_conversation(channel, "public")
    clock = Clock()
    types = ConversationTypes(client, size=2, ttl=60, clock=clock)

    def calls() -> int:  # answered or not
        return len([c for c in slack.calls if c.method == "conversations.info"])

    assert types.lookup("C1").kind == types.lookup("C2").kind == "public"
    types.lookup("C1")  # cached, and now the most recent
    assert calls() == 2
    types.lookup("C3")  # evicts C2, the least recently used
    assert len(types) == 2 and calls() == 3
    types.lookup("C1")
    assert calls() == 3
    types.lookup("C2")
    assert calls() == 4
    clock.now = 61.0  # everything expired
    types.lookup("C2")
    assert calls() == 5
    # What Slack says now counts: a channel that became an mpim... or unknown.
    slack.add_conversation("C2", "mpim")
    types.forget("C2")
    assert types.lookup("C2").kind == "mpim"
    assert types.lookup("C9").audience == "unknown"  # channel_not_found
    assert types.lookup("C9").audience == "unknown"
    assert calls() == 8 and len(types) == 2  # failures are asked again, never cached


def test_the_fake_is_strict_about_unknown_conversations(client: WebClient) -> None:
    from slack_sdk.errors import SlackApiError

    with pytest.raises(SlackApiError) as err:
        client.conversations_info(channel="C0NOWHERE")
    assert err.value.response["error"] == "channel_not_found"


def test_the_manifest_asks_for_what_conversations_info_needs() -> None:
    """Slack's reference: conversations.info needs channels:read, groups:read, im:read and
    mpim:read (each for its kind); channel_shared/unshared refresh the cached kind."""
    manifest = Path(__file__).parents[3] / "adapters" / "slack" / "manifest.yml"
    listed = set(re.findall(r"^\s+- ([a-z_.:]+)", manifest.read_text(encoding="utf-8"), re.M))
    assert {"channels:read", "groups:read", "im:read", "mpim:read"} <= listed
    assert {"app_mention", "message.mpim", "channel_shared", "channel_unshared"} <= listed
