"""Credentials recognised by their shape rather than a provider: URLs (keys: `keys.py`)."""

from __future__ import annotations

import re

from bot.ingest.secrets.rules import TokenRule
from bot.ingest.secrets.values import is_key_shaped, is_placeholder, looks_random

_SCHEME = "[a-zA-Z][a-zA-Z0-9+.-]{1,20}"


def _real_password(value: str) -> bool:
    return not is_placeholder(value) and not value.isdigit()


URL_RULES: tuple[TokenRule, ...] = (
    # postgres://app:s3cret@db/x, redis://:s3cret@cache, https://deploy:tok@git.example.com
    TokenRule(
        "url",
        "url_password",
        "://",
        f"{_SCHEME}://[^\\s:/@'\"`<>]{{0,64}}:(?P<secret>[^\\s@/'\"`<>]{{3,1024}})@[^\\s/'\"`<>]+",
        back=21,
        check=_real_password,
    ),
    # https://<token>@host: a token alone in the user part
    TokenRule(
        "url",
        "url_token",
        "://",
        f"{_SCHEME}://(?P<secret>[A-Za-z0-9_-]{{20,}})@[\\w.-]+",
        back=21,
        check=looks_random,
    ),
    # https://<32 hex>@host: a DSN's key (Sentry-style services) in the user part
    TokenRule(
        "url",
        "url_hex_key",
        "://",
        f"{_SCHEME}://(?P<secret>[0-9a-f]{{32,64}})@[\\w.-]+",
        back=21,
        check=is_key_shaped,
    ),
    # Incoming webhooks whose URL is the credential: Mattermost, Rocket.Chat, Gitea, Make...
    TokenRule(
        "url",
        "webhook_url",
        "/hooks/",
        "/hooks/(?P<secret>[A-Za-z0-9_-]{16,128}(?:/[A-Za-z0-9_-]{16,128})?)",
        boundary=False,
        check=looks_random,
    ),
    TokenRule(
        "make",
        "make_webhook",
        ".make.com/",
        "\\.make\\.com/(?P<secret>[a-z0-9]{32})(?![A-Za-z0-9])",
        boundary=False,
        check=looks_random,
    ),
    # ?access_token=..., &api_key=...: credentials in a query string
    *(
        TokenRule(
            "url",
            "url_query_credential",
            trigger,
            f"[?&;][\\w-]{{0,16}}{re.escape(trigger)}(?P<secret>[A-Za-z0-9._~%+/-]{{16,}})",
            back=18,
            boundary=False,
            check=looks_random,
        )
        for trigger in ("token=", "key=", "secret=", "password=", "auth=")
    ),
)
