"""Scrub secrets from file text before it is chunked, stored, embedded or shown to a model.

Each detector names a kind of secret and the part of a match to redact. The
replacement never adds or removes a newline, so line numbers (and so every
citation) stay exact. Patterns aim at credentials that look like
credentials; ordinary code such as `password = request.form["password"]`
is left alone, because only literal values are redacted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

REDACTED = "[REDACTED]"

_CONFIG_SUFFIXES = (
    ".env", ".ini", ".cfg", ".conf", ".toml", ".yaml", ".yml", ".json", ".properties", ".tfvars",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Detector:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # which group holds the secret (0 = the whole match)
    # Literal substrings a match must contain (lower-cased when `folded`): a file with
    # none of them is skipped without running the pattern, which is most files.
    triggers: tuple[str, ...] = ()
    folded: bool = False
    # When every match holds a trigger (low, high) characters from its start, the pattern
    # is tried only there (`_anchored_sub`), not at every word boundary of the file.
    anchor: tuple[int, int] | None = None
    # The triggers as one pattern: one regex search beats a scan per trigger.
    gate: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    # Every occurrence of a trigger, overlapping ones too (a lookahead matches empty).
    finder: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gate", _any_of(self.triggers) if self.triggers else None)
        finder = _rx(f"(?={_any_of(self.triggers).pattern})") if self.anchor else None
        object.__setattr__(self, "finder", finder)

    def sub(self, replace: Callable[[re.Match[str]], str], text: str) -> str:
        """`pattern.sub(replace, text)`, the same matches found with less scanning."""
        if self.finder is None or self.anchor is None:
            return self.pattern.sub(replace, text)
        return _anchored_sub(self.pattern, self.finder, self.anchor, replace, text)


def _rx(text: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(text, flags)


def _any_of(literals: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, literals)))


# Names that announce a secret (not secrets themselves).
_SECRET_NAMES = (
    r"password|passwd|pwd|pass|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?key"  # noqa: S105
    r"|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|token|credentials?"
)
_NAME_TRIGGERS = ("pass", "pwd", "secret", "key", "token", "credential")
_NAME_GATE = _any_of(_NAME_TRIGGERS)

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "aws_access_key",
        _rx(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        triggers=("AKIA", "ASIA", "AGPA", "AIDA", "AROA"),
    ),
    Detector(
        "aws_secret_key",
        _rx(r"(?i)aws_?secret(?:_?access)?_?key\W{0,5}[=:]\W{0,3}([A-Za-z0-9/+=]{40})\b"),
        1,
        triggers=("aws",),
        folded=True,
    ),
    Detector(
        "github_token",
        _rx(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b"),
        triggers=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Detector(
        "slack_token",
        _rx(r"\bxox[abposr]-[A-Za-z0-9-]{10,250}\b|\bxapp-\d-[A-Za-z0-9-]{10,250}\b"),
        triggers=("xox", "xapp-"),
    ),
    Detector(
        "slack_webhook",
        _rx(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]{20,}"),
        triggers=("hooks.slack.com",),
    ),
    Detector(
        "openai_key", _rx(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}\b"), triggers=("sk-",)
    ),
    Detector(
        "stripe_key",
        _rx(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,99}\b"),
        triggers=("_live_", "_test_"),
        anchor=(2, 2),
    ),
    Detector("google_api_key", _rx(r"\bAIza[0-9A-Za-z_-]{35}\b"), triggers=("AIza",)),
    Detector(
        "sendgrid_key", _rx(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"), triggers=("SG.",)
    ),
    Detector("npm_token", _rx(r"\bnpm_[A-Za-z0-9]{36}\b"), triggers=("npm_",)),
    Detector("twilio_key", _rx(r"\bSK[0-9a-fA-F]{32}\b"), triggers=("SK",), anchor=(0, 0)),
    Detector(
        "jwt",
        _rx(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),
        triggers=("eyJ",),
    ),
    Detector(
        "url_password",
        _rx(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'\"]{1,64}:([^\s@/'\"]{3,128})@[^\s/'\"]+"),
        1,
        triggers=("://",),
        anchor=(2, 21),  # after the scheme, which holds no ":"
    ),
)

# A quoted literal assigned to something (`= "x"`, `: 'x'`, `=> "x"`): the scan starts at
# the operator, a literal the regex engine finds fast; the name is checked after, on its line.
_ASSIGNED_LITERAL = _rx(r"(?:=>|:=|=|:)[ \t]*[rbuf]?[\"']([^\"'\s]{6,256})[\"']")
_SECRET_NAME_BEFORE = _rx(rf"(?i)(?:{_SECRET_NAMES})[\w.-]{{0,40}}[\"']?[ \t]*$")

_PRIVATE_KEY = _rx(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?-----END \1-----", re.S
)
_CONFIG_ASSIGNMENT = _rx(
    rf"(?im)^\s*(?:export\s+)?[\w.-]*(?:{_SECRET_NAMES})[\w.-]*\s*[=:]\s*[\"']?([^\s\"'#]{{6,256}})"
)
_CONFIG_VALUE = _rx(r"(?m)[=:]\s*[\"']?([A-Za-z0-9+/=_\-.]{20,256})[\"']?\s*$")


@dataclass(frozen=True, slots=True)
class ScrubResult:
    text: str
    found: Counter[str]


def scrub(text: str, path: str = "") -> ScrubResult:
    """Redact secrets in `text`; the result has exactly as many lines as the input."""
    found: Counter[str] = Counter()
    if "-----BEGIN" in text:
        text = _PRIVATE_KEY.sub(_private_key_replacer(found), text)
    folded = text.lower()
    for detector in DETECTORS:
        haystack = folded if detector.folded else text
        if detector.gate is not None and not detector.gate.search(haystack):
            continue
        text = detector.sub(_replacer(detector.kind, detector.group, found), text)
    if _NAME_GATE.search(folded):
        text = _ASSIGNED_LITERAL.sub(_assignment_replacer(text, found), text)
    if _is_config(path):
        text = _CONFIG_ASSIGNMENT.sub(_replacer("config_secret", 1, found), text)
        text = _CONFIG_VALUE.sub(_high_entropy_replacer(found), text)
    return ScrubResult(text, found)


def _anchored_sub(
    pattern: re.Pattern[str],
    finder: re.Pattern[str],
    anchor: tuple[int, int],
    replace: Callable[[re.Match[str]], str],
    text: str,
) -> str:
    """`pattern.sub` trying `pattern` only at the starts a trigger allows, in order.

    Positions are tried in increasing order, each once, and a match resumes
    after its end, as `re.sub` does; `match` at a position sees the character
    before it, so `\\b` means the same.
    """
    low, high = anchor
    parts: list[str] = []
    done = 0  # text before this is copied or replaced
    tried = -1  # every position up to here was tried, or lies inside a match
    for found in finder.finditer(text):
        start = max(found.start() - high, tried + 1)
        last = found.start() - low
        while start <= last:
            match = pattern.match(text, start)
            if match is None:
                start += 1
                continue
            parts += (text[done:start], replace(match))
            done = match.end()
            start = max(done, start + 1)
        tried = max(tried, last, done - 1)
    return "".join((*parts, text[done:])) if parts else text


def _replacer(kind: str, group: int, found: Counter[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        secret = match.group(group)
        if secret is None or secret == REDACTED or _is_placeholder(secret):
            return match.group(0)
        found[kind] += 1
        start, end = match.start(group) - match.start(0), match.end(group) - match.start(0)
        whole = match.group(0)
        return whole[:start] + REDACTED + whole[end:]

    return replace


def _assignment_replacer(text: str, found: Counter[str]) -> Callable[[re.Match[str]], str]:
    """Redact `name = "literal"` when the name announces a secret and the value is real."""

    def replace(match: re.Match[str]) -> str:
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = text[max(line_start, match.start() - 120) : match.start()]
        value = match.group(1)
        if not _SECRET_NAME_BEFORE.search(before) or value == REDACTED or _is_placeholder(value):
            return match.group(0)
        found["assigned_secret"] += 1
        whole = match.group(0)
        start, end = match.start(1) - match.start(0), match.end(1) - match.start(0)
        return whole[:start] + REDACTED + whole[end:]

    return replace


def _private_key_replacer(found: Counter[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        found["private_key"] += 1
        lines = match.group(0).split("\n")
        body = [REDACTED if line.strip() else line for line in lines[1:-1]]
        return "\n".join([lines[0], *body, lines[-1]])

    return replace


def _high_entropy_replacer(found: Counter[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        value = match.group(1)
        if value == REDACTED or _is_placeholder(value) or shannon_entropy(value) < 4.0:
            return match.group(0)
        found["high_entropy"] += 1
        return match.group(0).replace(value, REDACTED)

    return replace


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_PLACEHOLDER = _rx(
    r"(?i)^(?:x+|\*+|\.+|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%\([^)]*\)s|changeme|change_me|"
    r"your[_-].*|example.*|dummy.*|placeholder.*|redacted|none|null|true|false|password|secret|"
    r"test|testing|foobar|os\.environ.*|env\(.*)$"
)


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value))


def _is_config(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return (
        name.endswith(_CONFIG_SUFFIXES)
        or name.startswith(".env")
        or name
        in {
            "dockerfile",
            "docker-compose.yml",
        }
    )
