"""Judging a candidate value: placeholder, random-looking, or something harmless.

Placeholders are kept as they are, because redacting them damages answers
about configuration ("set GITLAB_TOKEN to <your-token>") and hides nothing:
a run of one character (`xxxx`, `****`, `0000`), anything in angle brackets
or template braces (`<token>`, `${TOKEN}`, `{{ token }}`, `%(token)s`), a
shell variable (`$TOKEN`), the words people write instead of a value
(`changeme`, `your-api-key`, `example`, `dummy`, `placeholder`, `redacted`,
`todo`, ...), and the documentation examples of AWS (`AKIAIOSFODNN7EXAMPLE`,
`wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`), which AWS publishes as not
working keys.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from itertools import pairwise

_PLACEHOLDER_WORDS = re.compile(
    r"(?i)^(?:changeme|change[_-]?me|change[_-]?this|replace[_-]?me|your[_-].*|my[_-]?(?:token|secret|key|password)"
    r"|example.*|.*[_-]example|sample.*|.*dummy.*|.*fake.*|.*placeholder.*|.*changeme.*|redacted|none|null|nil|true|false"
    r"|password|passwd|pass|pw|pwd|secret|token|test|testing|foobar|foo|bar|baz|todo|tbd|fixme|insert.*|enter.*"
    r"|put[_-].*|add[_-].*|set[_-].*|xxx.*|\*+|required|optional|default|empty|string|str|value|secret[_-]?value"
    r"|<.*|.*>|not[_-]?set|unset|undefined|n/?a)$"
)
_TEMPLATED = re.compile(r"^-?\$[A-Za-z_({]|^%[A-Za-z_]+%$|\.\.\.|…")
# Interpolations: `${NAME}`, `{{ name }}`, `{% tag %}`, `%(name)s`, `{name}`, `$(cmd)`.
_TEMPLATE_PART = re.compile(
    r"\$\{[\w.:|/ -]*\}|\{\{[^{}]*\}\}|\{%[^{}]*%\}|%\([\w.-]+\)[sdr]"
    r"|\{[A-Za-z_][\w.]{0,31}(?:![rsa])?(?::[^{}]{0,16})?\}|\$\([^()]*\)"
)
_AWS_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    }
)
_REPEATED = re.compile(r"(.)\1{7,}")  # a random body never repeats one character eight times


def is_placeholder(value: str) -> bool:
    """A value written in place of a real secret (see the module docstring)."""
    stripped = value.strip("'\"`")
    if len(set(stripped)) <= 2 or stripped in _AWS_EXAMPLES:
        return True
    if _TEMPLATED.search(stripped) or _PLACEHOLDER_WORDS.match(stripped):
        return True
    if _templated(stripped):
        return True
    return _REPEATED.search(stripped) is not None and not stripped.startswith(
        "AAAAAAAAAAAAAAAAAAAAA"
    )


def _templated(value: str) -> bool:
    """A value filled in from elsewhere: little but interpolations (`${DB_PASSWORD}`,
    `Bearer {{ token }}`). Braces alone do not make one: `m{{h}o)p${e]nob(ody...` is a
    password whose punctuation happens to include them."""
    if "{" not in value and "$(" not in value and "%(" not in value:
        return False
    rest = _TEMPLATE_PART.sub("", value)
    if rest == value:
        return False
    letters = "".join(c for c in rest if c.isalnum())
    # Little left, or names around the interpolation: f"{kind}EventAttributes",
    # f"events!connection/{id}/auth".
    return (
        len(letters) < 8
        or shannon_entropy(letters) < 3.0
        or bool(_IDENTIFIER.match(letters))
        or all(len(w) >= 3 and w.isalpha() for w in re.split(r"[^A-Za-z0-9]+", rest) if w)
    )


_FILLER_WORDS = re.compile(r"EXAMPLE|HERE|Here|YOUR|Your|RANDOM|Random|<|\$\{")


def has_placeholder_body(value: str) -> bool:
    """A provider-shaped token whose body is filler: `ghp_xxxxxxxx...`, `sk-...EXAMPLE...`."""
    return (
        value in _AWS_EXAMPLES
        or _REPEATED.search(value.lstrip("A")) is not None
        or _FILLER_WORDS.search(value) is not None
        or (len(value) >= 16 and shannon_entropy(value) < 3.0)  # GR1348941 + "1231231231..."
    )


def _character_class(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2 if c.isdigit() else 3


_CLASS_SIZES = (26, 26, 10, 4)  # lower, upper, digit, other (_ - + / =)


def class_changes(value: str) -> float:
    """How often neighbouring characters change class (lower, upper, digit, other), as a
    share of how often they would in a random string of the same classes: about 1 for a
    generated key, 0.3-0.55 for CamelCase names with digits (`PKCS7PrivateKeyTypes`,
    `MLKEM768X25519PrivateKey`)."""
    if len(value) < 2:
        return 0.0
    classes = [_character_class(c) for c in value]
    seen = [_CLASS_SIZES[c] for c in set(classes)]
    expected = 1 - sum((n / sum(seen)) ** 2 for n in seen)
    if expected <= 0:
        return 0.0
    return sum(a != b for a, b in pairwise(classes)) / (len(value) - 1) / expected


def looks_generated(value: str) -> bool:
    """A long random value that is no name, whatever its context: safe to redact wherever
    it occurs again, or unquoted in code."""
    return (
        len(value) >= 16
        and _TOKEN_CHARS.match(value) is not None
        and not is_uuid(value)  # ids in examples repeat everywhere; a UUID is rarely a key
        and class_changes(value) >= 0.75
        and looks_random(value)
    )


_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_\-+/=]+$")


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def character_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )


def looks_random(value: str, *, min_length: int = 16) -> bool:
    """Whether a value has the look of a generated key rather than words, a name or a digest."""
    if len(value) < min_length or is_placeholder(value) or is_harmless(value):
        return False
    if is_hex_digest(value):
        return False
    if character_classes(value) < 2:
        return False
    return shannon_entropy(value) >= (3.0 if len(value) < 32 else 3.3)


_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_PATH = re.compile(r"^(?:/|\./|\.\./|~/|[A-Za-z]:\\)|^[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]{1,5}$")
_FILE_NAME = re.compile(r"^[\w.-]+\.[a-z]{2,10}$")
_IDENTIFIER = re.compile(r"^(?:[A-Z][a-z]+){2,}\d{0,3}$|^[a-z]+(?:[A-Z][a-z]+)+\d{0,3}$")
_VERSIONED = re.compile(r"[-_]v?\d+\.\d+(?:\.\d+)?$")
_DOTTED_NAME = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+(?:\(\))?$")
_HEADER_NAME = re.compile(r"^(?:X-)?[A-Z][a-z]+(?:-[A-Z][a-z]*)+$")
# Words joined by separators, each perhaps ending in a number (`bert-base-uncased`,
# `db-replica-2`, `MAX_RETRIES_3`); `jk-qatdz1xcgoz3yssqe` is no words.
_WORDS = re.compile(
    r"^[a-z]{1,24}(?:[-_ ](?:[a-z]{1,24}\d{0,4}|\d{1,14}))*$"
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z]{1,24}\d{0,4})+$"
)
# Capitalised words joined by `_` (`Le_ForceNewDomainKey`, `Netlify_ACCESS_TOKEN`): a
# shell or config name, whose classes change as often as a key's but only at word starts.
_SNAKE_CAMEL = re.compile(
    r"^(?:[A-Z][a-z]+|[a-z]{2,}|[A-Z]{1,5})(?:_?[A-Z][a-z]{2,}|_[A-Z]{2,12}|_[a-z]{2,})+$"
)
# A character set for `tr -dc` or a password generator: `_A-Z-a-z-0-9`, `A-Za-z0-9!@#$%`.
_CHARACTER_RANGES = re.compile(r"^[^A-Za-z0-9]*(?:[A-Za-z0-9]-[A-Za-z0-9][^A-Za-z0-9]*){2,}$")
_REFERENCE = re.compile(
    r"&[a-z]+;|&#\d+;|^(?:os\.|env\.|process\.env|settings\.|config\.|self\.|this\.)"
)
_BRACKETS = re.compile(r"[()\[\]\\]")  # unquoted: a call, an index, an escape
# Quoted, but still code: a call or an index written as a string, an escape, a regex.
_LITERAL_CODE = re.compile(r"^[A-Za-z_][\w.]*[\[(]|\\|\[\^|\(\?[:=!<P]|\][{*+?]|\{\d+(?:,\d*)?\}")
# Several fields in one value (`purpose,Value=production},{Key=cost`): a structure, not a key.
_STRUCTURED = re.compile(r"[{},].*=\w|=\w.*[{},]")
_HASH = re.compile(r"^(?:sha\d+|md5|sha|blake2b?|git|h1)[-:]")
_HEX_DIGEST = re.compile(r"^[0-9a-f]{7,128}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_hex_digest(value: str) -> bool:
    """A git SHA or a content hash, when nothing names it a secret."""
    return _HEX_DIGEST.match(value) is not None


def is_uuid(value: str) -> bool:
    return _UUID.match(value) is not None


def is_key_shaped(value: str) -> bool:
    """32 or more hex digits, or a UUID: how many providers write an API key (Datadog, New
    Relic, Pinecone's first keys). Under a key's name, not a digest: the name says so."""
    body = value.lower()
    long_hex = 32 <= len(body) <= 128 and _HEX_DIGEST.match(body) is not None
    return (long_hex or is_uuid(value)) and shannon_entropy(body) >= 3.0


_PUBLIC_IDS = re.compile(
    r"\.apps\.googleusercontent\.com$|^pk_(?:live|test)_|^pk\.eyJ|^phc_"
    r"|^ssh-(?:rsa|ed25519|dss) |^ecdsa-sha2-|^AC[0-9a-f]{32}$|^mob-"
)
_ARN = re.compile(r"^arn:aws[\w-]*:")


def is_harmless(value: str, *, literal: bool = False) -> bool:
    """URLs without credentials, paths, file names, names, header names, hashes, public ids.

    `literal`: the value is a quoted string, so brackets in it are characters of the
    value, not code (`"m{{h}o)p${e]nob(ody..."` is a password, `get(x)` unquoted is a call).
    """
    if _harmless_shape(value) or _REFERENCE.search(value) or _STRUCTURED.search(value):
        return True
    return is_code(value, literal=literal)


def is_code(value: str, *, literal: bool = False) -> bool:
    """A call, an index, an escape or a regex: brackets are code when unquoted; quoted, only
    in those shapes (`"get_token()"`, `"[^\\W\\d]\\w*"`), not in a password's punctuation."""
    return (_LITERAL_CODE if literal else _BRACKETS).search(value) is not None


_BASE64_VALUE = re.compile(r"^/[A-Za-z0-9+/]{15,}={0,2}$")


def _base64_from_root(value: str) -> bool:
    """`/HdN3Hs/sOcodYKwUUFauhNKoc3W87th3qDKpRFpDLe=`: base64 that starts with a `/`, not a
    path: a part of it is generated (mixed case and digits changing often), as no
    directory's name is."""
    if _BASE64_VALUE.match(value) is None:
        return False
    return any(looks_generated(part) for part in value.split("/") if len(part) >= 16)


def _harmless_shape(value: str) -> bool:
    return bool(
        _URL.match(value)
        or (_PATH.match(value) and not _base64_from_root(value))
        or _FILE_NAME.match(value)
        or _IDENTIFIER.match(value)
        or _VERSIONED.search(value)
        or (_DOTTED_NAME.match(value) and not _random_part(value))
        or _HEADER_NAME.match(value)
        or _WORDS.match(value)
        or _SNAKE_CAMEL.match(value)
        or _CHARACTER_RANGES.match(value)
        or _HASH.match(value)
        or _PUBLIC_IDS.search(value)
        or _ARN.match(value)
    )


def _random_part(value: str) -> bool:
    """`v2.yidxc5qd72l537obm0nr` is a version and a key, not a dotted name."""
    return any(len(p) >= 16 and looks_random(p) for p in value.split("."))


_B64_BODY = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_FILE_MAGIC = (
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"%PDF",
    b"PK\x03\x04",
    b"RIFF",
    b"<svg",
    b"<?xml",
)


def decodes_to_data(value: str) -> bool:
    """Base64 that decodes to text, a known file format or a certificate: a fixture, not a key."""
    if len(value) < 16 or not _B64_BODY.match(value):
        return False
    chunk = value[: len(value) - len(value) % 4] if "=" not in value else value
    try:
        raw = base64.b64decode(chunk.replace("-", "+").replace("_", "/") + "=" * (-len(chunk) % 4))
    except (binascii.Error, ValueError):
        return False
    if raw.startswith(_FILE_MAGIC) or b"CERTIFICATE" in raw[:64] or b"PUBLIC KEY" in raw[:64]:
        return True
    if not raw:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable / len(raw) > 0.95
