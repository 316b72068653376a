"""Secrets written in prose after the word that names them, with no assignment.

    For local testing use the staging datadog api key 3f2a9b8c...
    | Datadog | `DD_API_KEY` | `3f2a9b8c...` |
    # token for the staging account: Zf3D0q...
    - Password: Tr0ub4dor&3x

A README line, a Markdown table row, a comment, a docstring or an issue
template has no operator to read the value after; the value is the first
word on the same line, soon after the secret's name, that has a credential's
look. Prose is full of words, names, paths and hashes, so the look is judged
more strictly than in an assignment: a generated value anywhere on the rest
of the line; 32 hex digits or a UUID (how many providers write a key) and a
typed password only close behind the name, and never on a line that says
it is a digest, a commit or an id.
"""

from __future__ import annotations

import re

from bot.ingest.secrets.rules import Hit
from bot.ingest.secrets.values import (
    character_classes,
    class_changes,
    is_harmless,
    is_key_shaped,
    is_placeholder,
    is_uuid,
    looks_generated,
    looks_random,
    shannon_entropy,
)

REACH = 160  # how far past the name a value may be, on the same line
NEAR = 48  # how far a hex key or a password may be: "password: X", "api key `X`"
# A word of prose: what a value may be made of, without the punctuation around it.
_WORD = re.compile(r"[^\s`'\"|<>()\[\]{},;]+")
_TRAILING = ".:,!?"
# A line that says what its hex is: a digest, a commit, a fingerprint, an id.
_NOT_A_KEY = re.compile(
    r"(?i)\b(?:sha\d*|md5|hash|digest|checksum|commit|fingerprint|revision|uuid|guid|etag)\b"
    r"|\bids?\b|_id\b|(?-i:[a-z]Id\b)"
)
_PASSWORD_PUNCTUATION = frozenset("!#%&*+-./:=?@^_~")
_PIECES = re.compile(r"[^A-Za-z0-9]+")
_SEPARATED = re.compile(r"[=./:]")  # name=value, dotted.names, paths, host:port
_TOKEN = re.compile(r"^[A-Za-z0-9_\-+/=]+$")
_JOINERS = re.compile(r"[.:@]")
# `$argon2id$...`, `${TOKEN}`, `$(cat f)`, `&lt;...&gt;`, URLs; a `&` alone is a character
_SKIPPED = re.compile(r"\$[\w{(]|&(?:[A-Za-z]+|#\d+);|://")
_JOINED = re.compile(r"[^.:@]+")
_MIXED_CASE_CHANGES = 0.6
_LONGEST_VALUE = 1024  # no key pasted in prose is longer (private keys are blocks)
_LONGEST = REACH + _LONGEST_VALUE  # a value starting within reach is read to its end


def prose_hit(text: str, after: int, *, password: bool, hex_ok: bool) -> Hit | None:
    """The secret written after a secret's name that ends at `after`, if the rest of its line
    holds one. `password`: the name is a password's, so a typed password counts too;
    `hex_ok`: the name is a key's or a token's, so a hex or UUID key counts."""
    # A value starts within reach and may run past it, to the end of its line.
    stop = text.find("\n", after, after + _LONGEST)
    stop = min(len(text), after + _LONGEST) if stop < 0 else stop
    # What the line says before the name counts too, within reach (a line may be megabytes).
    line_start = max(text.rfind("\n", max(0, after - REACH), after) + 1, after - REACH, 0)
    says_not_a_key = not hex_ok or _NOT_A_KEY.search(text, line_start, stop) is not None
    for word in _WORD.finditer(text, after, stop):
        if word.start() - after > REACH:
            break
        value = word.group().rstrip(_TRAILING)
        if not 8 <= len(value) <= _LONGEST_VALUE or value.count("=") > 2:
            continue  # `key=key=key=...`: structure, not one value
        if _SKIPPED.search(value) or is_placeholder(value):
            continue  # hashes, templates, escaped text; URLs have rules of their own
        near = word.start() - after <= NEAR
        for begin, piece in _pieces(value):
            if _looks_secret(piece, near=near, password=password, hex_ok=not says_not_a_key):
                at = word.start() + begin
                return Hit(at, at + len(piece), "prose_secret")
    return None


def _pieces(value: str) -> list[tuple[int, str]]:
    """The word, then its long parts: `3Rvk9n.X7MTRE:eTaT_BC_8gFG...` is an id and a key."""
    out = [(0, value)]
    if _JOINERS.search(value):
        out += [
            (m.start(), m.group()) for m in _JOINED.finditer(value) if m.end() - m.start() >= 16
        ]
    return out


def _looks_secret(value: str, *, near: bool, password: bool, hex_ok: bool) -> bool:
    if looks_generated(value):
        return True
    if not near:
        return False
    if hex_ok and (is_key_shaped(value) or _random_token(value) or _short_hex_key(value)):
        return True
    if hex_ok and _punctuated_key(value):
        return True  # Django's SECRET_KEY: 50 characters of letters, digits and punctuation
    return password and _typed_password(value)


_LONG_TYPED = 24
_NAME_PUNCTUATION = re.compile(r"[./:]")  # dotted names, paths, hosts: never a generated key


def _punctuated_key(value: str) -> bool:
    """A long generated key of letters, digits and punctuation scattered through it
    (`7d@3pb*x9*9_t%w_*egk+v5...`), which no name, path, pin (`@<sha>`) or call is."""
    if len(value) < _LONG_TYPED or _NAME_PUNCTUATION.search(value) is not None:
        return False
    return sum(c in _PASSWORD_PUNCTUATION for c in value) >= 3 and _typed_password(value)


_SHORT_HEX = re.compile(r"^(?:[0-9a-f]{14,31}|[0-9A-F]{14,31})$")


def _short_hex_key(value: str) -> bool:
    """14-31 hex digits close behind a key's or a token's name (Pusher's 20, ipinfo's 14):
    longer than the abbreviated commit ids prose cites (7-12), on a line that names no
    commit, digest or id."""
    return (
        _SHORT_HEX.match(value) is not None
        and any(c.isdigit() for c in value)
        and not value.isdigit()
        and not value.isalpha()
        and shannon_entropy(value) >= 3.0
    )


def _random_token(value: str) -> bool:
    """Close behind a key's or a token's name, a random run of token characters with a digit
    (`sk_f8ca3762...`, `esecret_cmo02at0...`): what no word, name or digest looks like."""
    return (
        len(value) >= 20
        and _TOKEN.match(value) is not None
        and any(c.isdigit() for c in value)
        and not is_uuid(value)
        and looks_random(value)
        # CamelCase names with digits (`PKCS7PrivateKeyTypes`) change class far less often
        and (
            value.lower() == value
            or (value.upper() == value and value.isalnum())  # SCW..., AKIA...: one case
            or class_changes(value) >= _MIXED_CASE_CHANGES
        )
    )


def _typed_password(value: str) -> bool:
    """`Tr0ub4dor&3x`: letters, digits and punctuation mixed, no word, name, path or URL.

    Names joined by punctuation (`secrets.DOCKERHUB_TOKEN`, `token=None`,
    `x-access-token`, `localhost:5432/app`) have no piece that mixes letters with
    digits, as a typed password's pieces do."""
    if len(value) < 10 or is_harmless(value, literal=True) or is_uuid(value):
        return False  # an id or a digest after "password" is what the line is about
    pieces = [p for p in _PIECES.split(value) if p]
    mixed = any(any(c.isdigit() for c in p) and any(c.isalpha() for c in p) for p in pieces)
    marks = sum(c in _PASSWORD_PUNCTUATION for c in value)
    # `*ksSG@!5^^QN`: punctuation between the letters and digits; no separator of names.
    scattered = marks >= 2 and any(c.isdigit() for c in value) and not _SEPARATED.search(value)
    return (mixed or scattered) and character_classes(value) + (marks > 0) >= 3
