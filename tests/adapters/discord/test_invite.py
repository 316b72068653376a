"""The invite URL and finding the application id with the bot token (against the fake API)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from discord.http import Route

from adapters.discord.invite import fetch_application_id, invite_url
from bot.errors import ConfigError
from tests.servers.discord_fake import APP_ID, TOKEN, DiscordFake
from tests.support.discord_harness import run

VIEW, SEND, HISTORY, REACT = 1 << 10, 1 << 11, 1 << 16, 1 << 6
THREADS, CREATE_PUBLIC_THREADS, APP_COMMANDS = 1 << 38, 1 << 35, 1 << 31


def test_invite_url_asks_for_exactly_the_permissions_used() -> None:
    url = urlsplit(invite_url(str(APP_ID)))
    assert (url.scheme, url.netloc, url.path) == ("https", "discord.com", "/oauth2/authorize")
    query = parse_qs(url.query)
    assert query["client_id"] == [str(APP_ID)]
    assert query["scope"] == ["bot applications.commands"]
    expected = VIEW | SEND | HISTORY | REACT | THREADS | CREATE_PUBLIC_THREADS | APP_COMMANDS
    assert int(query["permissions"][0]) == expected


@pytest.mark.parametrize("bad", ["", "abc", "-5", "0"])
def test_invite_url_rejects_bad_ids(bad: str) -> None:
    with pytest.raises(ConfigError):
        invite_url(bad)


def test_application_id_from_the_token() -> None:
    async def scenario() -> tuple[int, list[str]]:
        fake = DiscordFake()
        old = Route.BASE
        base = await fake.start()
        try:
            app_id = await fetch_application_id(TOKEN, base)
            with pytest.raises(ConfigError):
                await fetch_application_id("wrong-token", base)
        finally:
            Route.BASE = old
            await fake.close()
        return app_id, [f"{r.method} {r.path} {r.status}" for r in fake.requests]

    app_id, calls = run(scenario())
    assert app_id == APP_ID
    assert calls == [
        "GET /users/@me 200",
        "GET /oauth2/applications/@me 200",
        "GET /users/@me 401",
    ]
