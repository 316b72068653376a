"""Application commands through real discord.py: defer first, answer by follow-up."""

from __future__ import annotations

import re
import threading
from typing import Any

from bot.core import Core
from tests.servers.discord_fake import APP_ID, InteractionState
from tests.servers.discord_wire import EPHEMERAL, SUPPRESS_EMBEDS
from tests.support.discord_gateway import GUILD_ID, MAPPED_CHANNEL
from tests.support.discord_harness import Harness, run, running

CALLBACK = r"/interactions/\d+/[^/]+/callback"
FOLLOWUP = rf"/webhooks/{APP_ID}/[^/]+"
INCIDENT = re.compile(r"\(incident [0-9a-f]{8}\)$")


def callbacks(h: Harness, state: InteractionState) -> list[Any]:
    return [
        r.body for r in h.fake.calls("POST", rf"/interactions/{state.id}/{state.token}/callback")
    ]


def followups(h: Harness, state: InteractionState) -> list[Any]:
    return [r.body for r in h.fake.calls("POST", rf"/webhooks/{APP_ID}/{state.token}")]


async def answered(h: Harness, state: InteractionState, count: int = 1) -> list[dict[str, Any]]:
    await h.fake.wait_for(lambda: len(state.messages) >= count)
    await h.settle()
    return state.messages


def test_ask_is_deferred_before_the_core_answers_then_followed_up_with_links(core: Core) -> None:
    release = threading.Event()
    real_ask, real_stream = core.ask, core.ask_stream

    def slow_ask(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(20), "the test never saw the deferral"
        return real_ask(*args, **kwargs)

    def slow_stream(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(20), "the test never saw the deferral"
        return real_stream(*args, **kwargs)

    core.ask = slow_ask  # type: ignore[method-assign]
    core.ask_stream = slow_stream  # type: ignore[method-assign]

    async def scenario() -> None:
        async with running(core) as h:
            state = h.slash("ask", {"question": "where do we retry failed webhooks?"})
            await h.fake.wait_for(lambda: callbacks(h, state))
            # Acknowledged while the answer is still being worked out.
            assert callbacks(h, state) == [{"type": 5}]
            assert followups(h, state) == []
            release.set()
            (message,) = await answered(h, state)
            body = followups(h, state)[0]
            assert body["allowed_mentions"] == {"parse": []}
            assert body["flags"] & SUPPRESS_EMBEDS and not message["flags"] & EPHEMERAL
            content = message["content"]
            assert content.startswith("> where do we retry failed webhooks?")
            link = re.search(r"\[src/hooks\.py:L(\d+)-L(\d+)\]\(<([^>]+)>\)", content)
            assert link is not None
            assert link[3].startswith("https://github.com/acme/demo/blob/")
            assert link[3].endswith(f"/src/hooks.py#L{link[1]}-L{link[2]}")
            assert "-# demo main@" in content
            ids = [c["custom_id"] for row in message["components"] for c in row["components"]]
            assert [i.rsplit(":", 1)[0] for i in ids] == ["codecite:vote:up", "codecite:vote:down"]

    run(scenario())


def test_status_repos_and_help_are_ephemeral(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            for name, expected in [
                ("status", "demo main@"),
                ("repos", "• demo (https://github.com/acme/demo)"),
                ("help", "/reindex"),
                ("map", "Most referenced symbols"),
            ]:
                state = h.slash(name, channel=h.fake.channels[MAPPED_CHANNEL])
                (message,) = await answered(h, state)
                assert callbacks(h, state) == [{"type": 5, "data": {"flags": EPHEMERAL}}]
                assert message["flags"] & EPHEMERAL
                assert expected in message["content"]
            # The mapped channel sees only its repository.
            assert "billing" not in message["content"]

    run(scenario())


def test_reindex_by_someone_without_the_admin_role_is_refused(core: Core) -> None:
    """Granting it is tested in test_admin_role.py (the role counts only in guild_ids)."""

    async def scenario() -> None:
        async with running(core) as h:
            refused = h.slash("reindex", {"repo": "demo"})
            (message,) = await answered(h, refused)
            assert message["content"].startswith("Only codecite admins can do that.")
            assert INCIDENT.search(message["content"]) and message["flags"] & EPHEMERAL

    run(scenario())


def test_ask_errors_are_shown_only_to_the_asker(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            state = h.slash("ask", {"question": "   "})
            (message,) = await answered(h, state)
            deleted = h.fake.calls(
                "DELETE", rf"/webhooks/{APP_ID}/{state.token}/messages/@original"
            )
            assert len(deleted) == 1  # the public "thinking" message is removed first
            assert message["flags"] & EPHEMERAL
            assert message["content"].startswith("Please ask a question about the code")
            assert INCIDENT.search(message["content"])
            assert "Traceback" not in message["content"]

    run(scenario())


def test_commands_are_registered_globally_without_guild_ids(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            registered = h.fake.commands["global"]
            assert sorted(c["name"] for c in registered) == [
                "ask",
                "forget",
                "help",
                "map",
                "reindex",
                "repos",
                "status",
            ]
            ask = next(c for c in registered if c["name"] == "ask")
            assert ask["options"][0]["name"] == "question" and ask["options"][0]["required"]
            reindex = next(c for c in registered if c["name"] == "reindex")
            assert reindex["options"][0]["required"] is False
            assert GUILD_ID not in {c.get("guild_id") for c in registered}

    run(scenario())
