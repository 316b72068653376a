"""Credentials recognised by their shape rather than a provider: URLs and private key blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.ingest.secrets.rules import Hit, TokenRule
from bot.ingest.secrets.values import is_placeholder, looks_random

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

_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
_ESCAPED_NEWLINE = re.compile(r"\\n|\\r\\n")


def private_key_hits(text: str) -> Iterator[Hit]:
    """The body of each private key block, one hit per line so no newline is redacted.

    A block may sit inside a string with escaped newlines (a service-account
    JSON file): its body is then one line, cut at the `\\n` escapes.
    """
    if "-----BEGIN" not in text:
        return
    unclosed: set[str] = set()  # labels with no END after some point: none after any later one
    done = 0
    for begin in _PEM_BEGIN.finditer(text):
        label = begin.group(1)
        if begin.start() < done or label in unclosed:
            continue
        close = text.find(f"-----END {label}-----", begin.end())
        if close < 0:
            unclosed.add(label)
            continue
        done = close
        at = begin.end()
        kind = "private_key"
        for line in text[begin.end() : close].split("\n"):
            for hit in _line_hits(line, at, kind):
                kind = ""
                yield hit
            at += len(line) + 1


def _line_hits(line: str, at: int, kind: str) -> Iterator[Hit]:
    """Hits for the key material on one physical line, skipping escapes and indentation."""
    cursor = 0
    for escape in [*_ESCAPED_NEWLINE.finditer(line), None]:
        stop = len(line) if escape is None else escape.start()
        segment = line[cursor:stop]
        stripped = segment.strip(" \t\r\"',|")
        if stripped:
            offset = cursor + segment.index(stripped)
            yield Hit(at + offset, at + offset + len(stripped), kind)
        if escape is not None:
            cursor = escape.end()
