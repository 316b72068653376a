"""`forget` in Slack through the real Bolt app and the strict fake Web API: `/codecite forget
<repo>` and a mention ask first with a red button (behind Slack's confirmation dialog);
the click, or `forget <repo> yes`, forgets with the clicker's own rights and scope."""

from __future__ import annotations

import json
from typing import Any

from adapters.slack.render import CONFIRM_ACTION, CONFIRM_BLOCK
from bot.core import CLI, Core
from tests.servers.slack_fake import Call, FakeSlack
from tests.support.slack_driver import CHANNEL, Driver, replies_in

REFUSED = "Only codecite admins can do that."


def responses(slack: FakeSlack, response_url: str, count: int = 1) -> list[Call]:
    rid = response_url.rsplit("/", 1)[1]

    def done() -> list[Call] | None:
        calls = [c for c in slack.calls if c.method == f"response_url:{rid}" and c.ok]
        return calls if len(calls) >= count else None

    return slack.wait_for(done, timeout=60)


def button(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    assert actions["block_id"] == CONFIRM_BLOCK
    (element,) = actions["elements"]
    return dict(element)


def said(slack: FakeSlack, driver: Driver, text: str, user: str, count: int = 1) -> list[Any]:
    """`@codecite <text>` in the channel; the first `count` replies in its thread."""
    ts = driver.say(text, user=user)["ts"]
    replies = slack.wait_for(
        lambda: (found := replies_in(slack, CHANNEL, ts)) and len(found) >= count and found,
        timeout=60,
    )
    return list(replies[:count])


def indexed(core: Core) -> list[str]:
    return [s.name for s in core.index.repo_states()]


def test_the_slash_command_asks_then_the_admins_click_forgets(
    slack: FakeSlack, driver: Driver, core: Core
) -> None:
    status, ack, response_url = driver.command("forget shop", user="UADMIN")
    assert status == 200 and ack == ""  # the question itself follows at once
    (asked,) = responses(slack, response_url)
    assert asked.params["response_type"] == "ephemeral"
    assert asked.params["text"].startswith("Forget shop? This removes its 1 file and 1 chunk")
    assert asked.params["text"].endswith(
        "To confirm: the button below, or `/codecite forget shop yes`"
    )
    element = button(asked.params["blocks"])
    assert (element["action_id"], element["value"], element["style"]) == (
        CONFIRM_ACTION,
        "forget shop yes",
        "danger",
    )
    assert element["text"]["text"] == "Forget shop"
    assert element["confirm"]["confirm"]["text"] == "Forget shop"
    assert indexed(core) == ["billing", "shop"]  # asking removed nothing

    # someone who is not an admin clicks (say it was shared): refused, privately, nothing goes
    refused_url = slack.new_response_url()
    driver.click(
        CONFIRM_ACTION, element["value"], user="UNOBODY", message=None,
        block_id=CONFIRM_BLOCK, response_url=refused_url,
    )  # fmt: skip
    (refusal,) = responses(slack, refused_url)
    assert refusal.params["text"].startswith(REFUSED)
    assert refusal.params["replace_original"] is False and indexed(core) == ["billing", "shop"]

    click_url = slack.new_response_url()
    driver.click(
        CONFIRM_ACTION, element["value"], user="UADMIN", message=None,
        block_id=CONFIRM_BLOCK, response_url=click_url,
    )  # fmt: skip
    working, report = responses(slack, click_url, count=2)
    assert working.params["text"] == ":wastebasket: Forgetting shop; the result follows here."
    assert report.params["text"].startswith("Forgot shop: removed 1 file and 1 chunk")
    for call in (working, report):  # the question itself is replaced, and stays private
        assert call.params["replace_original"] is True
        assert call.params["response_type"] == "ephemeral"
    assert indexed(core) == ["billing"]

    _, _, repos_url = driver.command("repos")
    (repos,) = responses(slack, repos_url)
    assert "billing" in repos.params["text"] and "shop" not in repos.params["text"]
    assert all(h.chunk.repo == "billing" for h in core.search("retry failed webhooks", CLI))


def test_the_slash_command_refuses_non_admins_and_other_channels_repositories(
    slack: FakeSlack, driver: Driver, core: Core
) -> None:
    _, _, refused_url = driver.command("forget shop yes", user="UNOBODY")
    (refused,) = responses(slack, refused_url)
    assert refused.params["text"].startswith(REFUSED) and "incident" in refused.params["text"]
    _, _, scoped_url = driver.command("forget billing", user="UADMIN", channel="C0SHOP")
    (scoped,) = responses(slack, scoped_url)
    assert scoped.params["text"].startswith("There is no repository named 'billing' here.")
    assert indexed(core) == ["billing", "shop"]

    _, ack, done_url = driver.command("forget billing yes", user="UADMIN")
    assert json.loads(ack)["text"] == ":wastebasket: Forgetting billing; the result follows here."
    (done,) = responses(slack, done_url)
    assert done.params["text"].startswith("Forgot billing: removed 1 file and 1 chunk")
    assert indexed(core) == ["shop"]


def test_a_mention_asks_in_the_thread_and_forget_yes_forgets(
    slack: FakeSlack, driver: Driver, core: Core
) -> None:
    (question,) = said(slack, driver, "forget shop", "UADMIN")
    assert question["text"].startswith("Forget shop? This removes")
    assert button(question["blocks"])["value"] == "forget shop yes"
    assert indexed(core) == ["billing", "shop"]

    working, report = said(slack, driver, "forget shop yes", "UADMIN", count=2)
    assert working["text"] == ":wastebasket: Forgetting shop; the result follows here."
    assert report["text"].startswith("Forgot shop: removed 1 file and 1 chunk")
    assert indexed(core) == ["billing"]


def test_a_mention_that_starts_with_forget_but_asks_something_is_a_question(
    slack: FakeSlack, driver: Driver, core: Core
) -> None:
    question = "forget the cache: where do we retry failed webhooks?"
    (answer,) = said(slack, driver, question, "UNOBODY")
    assert "shop/webhooks.py" in answer["text"] and REFUSED not in answer["text"]
    (reply,) = said(slack, driver, "forget shop", "UNOBODY")
    assert reply["text"].startswith(REFUSED)
    assert indexed(core) == ["billing", "shop"]


def test_the_help_lists_forget_for_admins(slack: FakeSlack, driver: Driver) -> None:
    _, _, url = driver.command("help")
    (reply,) = responses(slack, url)
    line = "`/codecite forget &lt;repo&gt;`: remove a repository from codecite, after asking"
    assert f"{line} (admins only)" in reply.params["text"]  # Slack shows &lt; as <
