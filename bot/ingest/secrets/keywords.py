"""Secrets found by the name they are given: `export GITLAB_TOKEN=...`, `password: ...`.

The scan starts at each secret-sounding word of the file (a cheap search on
the lower-cased text), takes the whole name around it, judges the name, and
reads the value assigned to it (or compared with it): quoted or not, after
`=`, `:`, `:=`, `=>`, `?=`, `==`, `!==`, a flag's space (`--token VALUE`), an
`ENV NAME VALUE` line or an `Authorization: Bearer VALUE` header. A name that ends in a word naming
something other than the secret (`TOKEN_URL`, `PASSWORD_RESET_TEMPLATE`,
`API_KEY_HEADER`, `secret_name`, `password_file`) is not a secret's name;
the value must still look like a secret, not a path, URL, name or call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from enum import Enum

import ahocorasick_rs

from bot.ingest.secrets.filekinds import CODE, PLAIN, file_kind
from bot.ingest.secrets.name_words import (
    ISSUED_CERTIFICATE,
    KEY_ABOUT,
    NOT_THE_SECRET,
    PUBLIC,
    SECRET_ENDINGS,
    STRONG_KEY_OWNERS,
    WEAK_KEY_OWNERS_NOT,
)
from bot.ingest.secrets.prose import REACH, prose_hit
from bot.ingest.secrets.rules import Hit
from bot.ingest.secrets.values import (
    character_classes,
    is_code,
    is_harmless,
    is_key_shaped,
    is_placeholder,
    is_uuid,
    looks_generated,
    looks_random,
)


class Strength(Enum):
    PASSWORD = "password"  # any real-looking value  # noqa: S105
    TOKEN = "token"  # a value with the look of a credential  # noqa: S105
    KEY = "key"  # `<provider>_key`: a value that looks generated, or a hex or UUID key
    WEAK = "weak"  # `key`: only a value that looks generated


_WEAKISH = (Strength.KEY, Strength.WEAK)


_WORDS = (
    "salt",  # WordPress AUTH_SALT, Drupal hash_salt
    "pass",  # db_pass, PGPASS; also passw(ord)
    "pwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "auth",
    "bearer",
    "key",
    "dsn",
    "sas",
    "pat",
    "cert",  # app_certificate
)
_FINDER = ahocorasick_rs.AhoCorasick(
    _WORDS,
    matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
    implementation=ahocorasick_rs.Implementation.DFA,
)
_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
_NAME_AFTER = re.compile(r"[A-Za-z0-9_.-]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[._\-]+")

_SCHEME_WORDS = frozenset(
    {"bearer", "token", "basic", "bot", "apikey", "key", "sso-key", "digest", "api-token", "ssws"}
)

# What follows a name: an optional closing quote or bracket, an operator, then the value.
# A type may sit after the name (Go: `var apiToken string = "..."`); JSON in JSON escapes quotes.
_TAIL = re.compile(
    r"(?:\\?[\"'\]]){0,2}(?:[ \t]*:?[ \t]*(?:string|String|str)(?=[ \t]*=))?"
    r"[ \t]*(?P<op>===|!==|==|!=|=>|:=|\?=|\+=|=|:|[ \t])[ \t]*"
    r"(?:[rbuRBUfF]?\\?(?P<q>[\"'`])(?P<quoted>[^\"'`\s]{1,2048}?)\\?(?P=q)"
    r"|(?P<bare>[^\s\"'`;]{1,2048}))"
)
_COMPARISONS = frozenset({"===", "!==", "==", "!="})
_NAME_KEY_BEFORE = re.compile(r"name:[ \t]*[\"']?$")
_AFTER_SCHEME = re.compile(r"[ \t]+(?P<v>[^\s\"'`]{1,2048})")
_NEXT_LINE_VALUE = re.compile(r"[ \t]*-?[ \t]*value[ \t]*:[ \t]*[\"']?(?P<v>[^\s\"'#]{1,2048})")


@functools.lru_cache(maxsize=8192)  # names repeat: `key`, `self.token`, `password`
def name_strength(name: str) -> Strength | None:
    """How strongly a name announces a secret, or None when it names something else."""
    words = [w.lower() for w in _SPLIT.split(_CAMEL.sub("_", name.strip("-$@.:"))) if w]
    if not words or PUBLIC & set(words):
        return None
    if words[-1] == "key" and len(words) > 1:
        owner = words[-2]
        if owner in STRONG_KEY_OWNERS:
            return Strength.TOKEN  # SECRET_KEY, api.key, AccountKey
        if owner in WEAK_KEY_OWNERS_NOT or owner in NOT_THE_SECRET:
            return None  # cache_key, TOKEN_KEY (the name of a key, not a key)
        return Strength.KEY  # NEWSAPI_KEY, maptiler_key: a provider's key, if it looks one
    if words[-2:] == ["secret", "id"]:
        return Strength.TOKEN  # Vault's AppRole secret_id is the credential itself
    if words[-1] in NOT_THE_SECRET and len(words) > 1:
        return None  # TOKEN_URL, secret_name, TOKEN_KEY (the name of a key, not a key)
    for i, word in enumerate(words):
        if word.endswith(("password", "passwd", "passphrase")) or word == "pwd":
            return Strength.PASSWORD
        if word in {"pass", "pw"} and i == len(words) - 1 and i > 0:
            return Strength.PASSWORD  # db_pass, SMTP_PW; not pass_zero, PassStateEntered
        if word.endswith(SECRET_ENDINGS) or word in {
            "authorization",
            "auth",
            "bearer",
            "dsn",
            "sas",
            "pat",
            "privatekey",
        }:
            return Strength.TOKEN
        qualified = _qualified_key(words, i) if i > 0 else None
        if qualified is not None:
            return qualified
    return Strength.WEAK if words == ["key"] else None


def _qualified_key(words: list[str], i: int) -> Strength | None:
    """API_KEY_PROD, BTC_PRIVATE_KEY_WIF (not api_key_hash); an issued app certificate."""
    if words[i] == "key":
        if words[i - 1] not in STRONG_KEY_OWNERS or KEY_ABOUT & set(words[i + 1 :]):
            return None
        return Strength.TOKEN
    if i == len(words) - 1 and words[i - 1] in ISSUED_CERTIFICATE:
        return Strength.KEY
    return None


def names_something_else(name: str) -> bool:
    """A name that is not a secret's and ends in a word naming something else (`client_id`)."""
    words = [w.lower() for w in _SPLIT.split(_CAMEL.sub("_", name)) if w]
    return bool(words) and name_strength(name) is None and words[-1] in NOT_THE_SECRET


# curl -u user:secret, --user 'user:secret', -u ":secret"
_USER_FLAG = re.compile(
    r"(?:^|[ \t])(?:-u|--user)[ \t]+[\"']?[^\s:\"'$]{0,64}:"
    r"[\"']?(?P<v>[^\s\"'$][^\s\"']{3,255})[\"']?(?=\s|$)",
    re.M,
)


def user_flag_hits(text: str) -> Iterator[Hit]:
    """Basic-auth credentials on a command line: `curl -u name:password`."""
    if "-u" not in text:
        return
    for match in _USER_FLAG.finditer(text):
        value = match.group("v")
        if not is_placeholder(value) and not _names_something(value):
            yield Hit(match.start("v"), match.end("v"), "command_line_password")


def keyword_hits(text: str, folded: str, path: str) -> Iterator[Hit]:
    yield from user_flag_hits(text)
    kind = file_kind(path)
    done = -1
    prose = (-1, False, False)  # how far prose was read last, and what it was allowed to find
    for _, at, stop in _FINDER.find_matches_as_indexes(folded):
        if at < done:
            continue
        start, end = _name_span(text, at, stop)
        strength = _plain_file_strength(text[start:end], kind)
        if strength is None:
            done = end
            continue
        hit, done = _value_after(text, start, end, strength, kind)
        if hit is None:  # no assignment: a README line, a table row, a comment
            # In prose the name reads as in any file: a bare `key` still wants an owner.
            named = _prose_strength(text, start, name_strength(text[start:end]) or strength)
            allowed = (named is Strength.PASSWORD, named is not Strength.WEAK)
            # Prose already read past here, allowed as much: reading it again finds nothing.
            if end >= prose[0] or allowed > prose[1:]:
                hit = prose_hit(text, end, password=allowed[0], hex_ok=allowed[1])
                line_end = text.find("\n", end, end + REACH)  # prose reads one line
                prose = (end + REACH if line_end < 0 else line_end, *allowed)
        if hit is not None:
            done = max(done, hit.end)
            yield hit


@functools.lru_cache(maxsize=8192)
def _plain_file_strength(name: str, kind: str) -> Strength | None:
    """A name's strength, read more strongly in a config file or a script, where a name is
    not a variable of code: `pass =` alone names the password (rclone's WebDAV and FTP
    remotes, `.netrc`-like files; in code `pass` is a statement), a bare `key =` the key
    itself (a hex or UUID key too: rclone's Swift remote), and `<token|password|secret>.key`
    a key when its value looks generated (`xxl-sso.token.key=`; in code, the name of one)."""
    strength = name_strength(name)
    if kind != PLAIN:
        return strength
    if strength is Strength.WEAK:
        return Strength.KEY
    words = [w.lower() for w in _SPLIT.split(_CAMEL.sub("_", name.strip("-$@.:"))) if w]
    if strength is None and words in (["pass"], ["pw"]):
        return Strength.PASSWORD
    if strength is None and len(words) > 1 and words[-1] == "key" and words[-2] in _SECRET_WORD:
        return Strength.WEAK
    return strength


_SECRET_WORD = frozenset({"token", "password", "secret", "passphrase"})


_PROSE_OWNER = re.compile(r"([A-Za-z]{3,24})[ \t]+$")
_NOT_AN_OWNER = frozenset("the this that your our my its their same one any each".split())


def _prose_strength(text: str, start: int, strength: Strength) -> Strength:
    """In prose a key's owner is the word before it: `the datadog api key`, not `api_key`."""
    if strength is not Strength.WEAK:
        return strength
    owner = _PROSE_OWNER.search(text, max(0, start - 26), start)
    if owner is None or owner.group(1).lower() in _NOT_AN_OWNER:
        return strength
    return name_strength(f"{owner.group(1)}_key") or strength


def _name_span(text: str, start: int, end: int) -> tuple[int, int]:
    window = text[max(0, start - 80) : start]
    begin = start - (len(window) - len(window.rstrip(_NAME_CHARS)))
    after = _NAME_AFTER.match(text, end)
    return begin, (after.end() if after else end)


def _value_after(
    text: str, start: int, end: int, strength: Strength, kind: str
) -> tuple[Hit | None, int]:
    """The secret assigned to the name at start:end, if any, and where the scan goes on.

    The scan resumes after the value even when it is refused: words inside a
    value (`key=key=key...`) are not names, and judging each again costs a lot.
    """
    markup = _markup_value(text, start, end, strength)
    if markup is not None:
        return markup, markup.end
    tail = _TAIL.match(text, end)
    if tail is None:
        return _kubernetes_env_value(text, start, end, strength), end
    op = tail.group("op")
    if op in (" ", "\t") and not _space_assigns(text, start, text[start:end]):
        return None, end
    if op in _COMPARISONS and strength in _WEAKISH:
        return None, end  # `key == "DocumentDBEventSourceConfig"`: code looking at a name
    # `...;Password=...;` is a connection string inside a literal, even in a code file.
    if kind == CODE and start > 0 and text[start - 1] == ";":
        kind = PLAIN
    hit = None if _names_itself(text[start:end], tail) else _judged(text, tail, strength, kind)
    if hit is None and tail.group("quoted") and text[start:end].lower() in _NAMING_ATTRIBUTES:
        return None, tail.start("quoted")  # `key="Password" value="..."`: the name is inside
    return hit, max(tail.end(), hit.end if hit is not None else 0)


def _names_itself(name: str, tail: re.Match[str]) -> bool:
    """`DB_PASSWORD: DB_PASSWORD`, `ENV API_TOKEN=API_TOKEN`: a name standing for itself."""
    value = (tail.group("quoted") or tail.group("bare") or "").rstrip(",;)]}>")
    return len(value) <= 2 * len(name) and _folded_name(value) == _folded_name(name)


def _folded_name(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _judged(text: str, tail: re.Match[str], strength: Strength, kind: str) -> Hit | None:
    quoted = tail.group("quoted")
    group = "quoted" if quoted is not None else "bare"
    value = tail.group(group)
    begin = tail.start(group)
    if quoted is None:
        value = value.rstrip(",;)]}>")
    if value.lower() in _SCHEME_WORDS and strength not in _WEAKISH:
        return _after_scheme(text, tail.end(group), strength)
    if quoted is None and kind == CODE and not _literal_in_code(value, strength):
        return None  # in code an unquoted value is an expression, not a literal
    # In a Dockerfile, a script or a config file an unquoted value is a string as written.
    if not _secret_value(value, strength, literal=quoted is not None or kind == PLAIN):
        return None
    return Hit(begin, begin + len(value), "keyword_secret")


def _literal_in_code(value: str, strength: Strength) -> bool:
    """An unquoted value in a code file that cannot be a name or an expression: long,
    random, mixing lower and upper case with digits (`token=Zf3D0q...` in a docstring or a
    log line quoted in a comment). Names (`API_TOKEN_DEFAULT`, `PKCS7PrivateKeyTypes`)
    never are: their character classes change far less often than a random key's."""
    if len(value) < 16:
        return False
    if value[0].isdigit() and _TOKEN_BODY.match(value) and any(c.isalpha() for c in value):
        return not is_uuid(value)  # `key=81a1411a7e...`: no identifier or number starts so
    if strength not in _WEAKISH and _LONG_HEX.match(value) and not value.isalpha():
        return True  # `sentry_token := ad00eba0...` (64 hex): named a token, no name is this
    return len(value) >= 20 and character_classes(value) >= 2 and looks_generated(value)


_TOKEN_BODY = re.compile(r"^[A-Za-z0-9_\-]+$")
_LONG_HEX = re.compile(r"^[0-9a-f]{32,}$|^[0-9A-F]{32,}$")


def _space_assigns(text: str, start: int, name: str) -> bool:
    """A space separates a name from its value: a flag, a header scheme or a Dockerfile ENV/ARG."""
    if name.startswith("--") or name.lower() == "bearer":
        return True
    before = text[max(0, start - 16) : start]
    return before[before.rfind("\n") + 1 :].strip().upper() in {"ENV", "ARG"}


def _after_scheme(text: str, at: int, strength: Strength) -> Hit | None:
    """`Authorization: Bearer VALUE`: the credential is the word after the scheme."""
    match = _AFTER_SCHEME.match(text, at)
    if match is None:
        return None
    value = match.group("v").rstrip(",;)]}>\\")
    if not _secret_value(value, strength):
        return None
    return Hit(match.start("v"), match.start("v") + len(value), "authorization")


# `<password>VALUE</password>` (Maven settings, Jenkins credentials), and a name given as an
# attribute beside its value: `<add key="Password" value="VALUE" />` (NuGet, .config files).
_ELEMENT = re.compile(r">(?P<v>[^<>\n]{6,512})</")
_ATTRIBUTE_PAIR = re.compile(r"[\"'][ \t]+value[ \t]*=[ \t]*[\"'](?P<v>[^\"'\n]{6,512})[\"']")
_NAMING_ATTRIBUTES = frozenset({"key", "name"})
_NAMING_ATTRIBUTE = re.compile(r"(?:key|name)[ \t]*=[ \t]*[\"']$")


def _markup_value(text: str, start: int, end: int, strength: Strength) -> Hit | None:
    if start > 0 and text[start - 1] == "<":
        match = _ELEMENT.match(text, end)
    elif _NAMING_ATTRIBUTE.search(text[max(0, start - 12) : start]):
        match = _ATTRIBUTE_PAIR.match(text, end)
    else:
        return None
    if match is None:
        return None
    value = match.group("v").strip()
    if not _secret_value(value, strength, literal=True):
        return None
    begin = match.start("v") + match.group("v").index(value)
    return Hit(begin, begin + len(value), "keyword_secret")


def _kubernetes_env_value(text: str, start: int, end: int, strength: Strength) -> Hit | None:
    """`- name: API_TOKEN` then `value: ...` on the next line (Kubernetes and compose env lists)."""
    if not _NAME_KEY_BEFORE.search(text[max(0, start - 16) : start]):
        return None
    line_end = text.find("\n", end, end + 16)  # only spaces or a quote may follow the name
    if line_end < 0 or text[end:line_end].strip(" \t\"'\r"):
        return None
    match = _NEXT_LINE_VALUE.match(text, line_end + 1)
    if match is None or not _secret_value(match.group("v"), strength):
        return None
    return Hit(match.start("v"), match.end("v"), "keyword_secret")


def _secret_value(value: str, strength: Strength, *, literal: bool = False) -> bool:
    """`literal`: the value was quoted, so brackets are its characters, not code."""
    if len(value) < 6 or is_placeholder(value):
        return False
    if strength in _WEAKISH:
        random = looks_random(value) and not is_uuid(value)
        return random or (strength is Strength.KEY and is_key_shaped(value))
    if strength is Strength.PASSWORD:
        return not _names_something(value, literal=literal)
    if is_harmless(value, literal=literal):
        return False
    return len(value) >= 20 or (len(value) >= 8 and character_classes(value) >= 2)


_SOMETHING = re.compile(
    r"^[a-zA-Z][a-zA-Z0-9+.-]*://(?!.*@)|^(?:/|\./|\.\./|~/)|\.(?:html?|txt|json|ya?ml|pem|key|env)$"
    r"|^(?:os|env|process|settings|config|self|this|request|form|args|kwargs)\.|^@\w+$"
    r"|^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$"
)


def _names_something(value: str, *, literal: bool = False) -> bool:
    """A password's value that is a reference (URL, path, file, call, attribute), not a password."""
    if _SOMETHING.search(value):
        return True
    return is_code(value, literal=literal)
