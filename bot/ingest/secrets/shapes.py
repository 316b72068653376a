"""Credentials recognised by their shape rather than a provider: URLs (keys: `keys.py`)."""

from __future__ import annotations

import re

from bot.ingest.secrets.rules import TokenRule
from bot.ingest.secrets.values import (
    is_key_shaped,
    is_placeholder,
    is_uuid,
    looks_generated,
    looks_random,
)

_SCHEME = "[a-zA-Z][a-zA-Z0-9+.-]{1,20}"


def _real_password(value: str) -> bool:
    return not is_placeholder(value) and not value.isdigit()


def _generated(value: str) -> bool:
    return looks_random(value) or is_key_shaped(value)


def _path_credential(value: str) -> bool:
    return _generated(value) and not is_uuid(value)  # `/keys/<uuid>`: a REST path's id


def _service_credential(value: str) -> bool:
    """Segments of a notification service's URL (`pbul://<token>`, `discord://<id>/<token>`,
    `pagerduty://<key>@<key>`), of which one at least is generated (or, at 20 characters,
    random-looking) or a hex key shorter than a commit id or a digest."""
    return any(_service_segment(part) for part in re.split(r"[/@:]", value))


def _service_segment(value: str) -> bool:
    if is_uuid(value):
        return False
    if len(value) >= 20 and looks_random(value):
        return True
    return looks_generated(value) or (is_key_shaped(value) and len(value) < 40)


# Schemes of addresses, not of services whose URL carries the credential (Apprise-style
# `pover://user@token`, `gotify://host/token`): a web address's path is a location.
_SERVICE_SCHEME = (
    r"(?!(?:https?|ftps?|sftp|file|wss?|git|ssh|svn|hg|s3|gs|jdbc|data|mailto|chrome|about"
    r"|docker|oci|unix|tcp|udp)://)[a-z][a-z0-9+.-]{1,20}"
)

# A segment of up to 24 letters and digits before the credential: an incoming webhook's id
# is part of its credential URL (`/webhooks/<id>/<token>`), and is redacted with the token;
# after the other words (`/keys/v1/<key>`) it is a version or a kind, and is kept.
_WEBHOOK_PATHS = ("/webhook/", "/webhooks/")
_ID = "(?:[A-Za-z0-9]{1,24}/)?"


def _last_segment_credential(value: str) -> bool:
    return _path_credential(value.rsplit("/", 1)[-1])


_PATH_WORDS = tuple(
    f"/{word}/"
    for word in "webhook webhooks token tokens key keys secret secrets integration".split()
)

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
    # A notification service's URL: a generated segment in its user, host or path part,
    # tried before the user-part rules so `pagerduty://<key>@<key>` loses both keys
    TokenRule(
        "url",
        "service_url_credential",
        "://",
        f"(?<![A-Za-z0-9+.-]){_SERVICE_SCHEME}://(?:[^\\s/@:'\"`<>]{{0,64}}[/@:]){{0,6}}?"
        "(?P<secret>[A-Za-z0-9_-]{16,128}(?:[/@:][A-Za-z0-9_-]{16,128}){0,3})(?![A-Za-z0-9_-])",
        back=21,
        check=_service_credential,
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
    # ?sig=..., &X-Goog-Signature=...: a signed URL's signature is its credential
    *(
        TokenRule(
            "url",
            "url_signature",
            trigger,
            f"[?&;][\\w-]{{0,16}}{re.escape(trigger)}(?P<secret>[A-Za-z0-9._~%+/-]{{16,}})",
            back=18,
            boundary=False,
            check=_generated,
        )
        for trigger in ("sig=", "Signature=", "signature=")
    ),
    # /webhooks/<id>/<token>, /with/key/<key>, /integration/<key>/: a path segment after a
    # word naming a credential, random or a hex key, is the credential
    *(
        TokenRule(
            "url",
            "url_path_credential",
            trigger,
            re.escape(trigger)
            + (f"(?P<secret>{_ID}" if trigger in _WEBHOOK_PATHS else f"{_ID}(?P<secret>")
            + "[A-Za-z0-9_-]{16,128})(?![A-Za-z0-9_-])",
            boundary=False,
            check=_last_segment_credential,
        )
        for trigger in _PATH_WORDS
    ),
)
