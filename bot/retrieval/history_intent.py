"""Is this a question about the code's history, and which kind?

The kinds, in the phrasings people use:
  why    why was X added / removed / changed; why is X like this (the way it is); why
         does X behave (work) like this; why does X no longer do Y;
         what was the reason (motivation, rationale) for X
  when   when did X change; when was X added / introduced / removed; since when; how long
  since  what changed (in X, or at all) since a tag, a date, last week; recent changes
  who    who changed / wrote / knows / owns X; who last changed X
  which  which commit or PR introduced / removed / broke / fixed X
  log    the history (git log, blame) of X; the last change to X; recent commits
Code questions stay code questions: "why does X raise", "when is X called", "who calls X"
and "what changed X's value" use present tense or name no change, and none of these
patterns takes them. `bench/history_intent.py` counts the flips over every question set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from bot.retrieval.history_who import asks_last_change

HistoryKind = Literal["why", "when", "since", "who", "which", "log"]

_CHANGE = (
    r"(?:add|added|introduc\w*|chang\w*|remov\w*|delet\w*|renam\w*|deprecat\w*|rewr\w*|"
    r"refactor\w*|modif\w*|made|creat\w*|switch\w*|mov\w*|replac\w*|drop\w*|disabl\w*|"
    r"enabl\w*|revert\w*|split|merg\w*|land\w*|written|wrote|implement\w*|touch\w*|"
    r"updat\w*|edit\w*|fix\w*|broke|broken|start\w*|stop\w*|restructur\w*|redesign\w*|"
    r"becom\w*|became|turn\w* (?:on|off)|bump\w*|upgrad\w*|downgrad\w*|"
    r"done|happen\w*|decid\w*|chos\w*)"
)
_WHY = re.compile(
    rf"\bwhy\s+(?:was|were|did|has|have|had)\b(?:\s+[^\s?!]+){{0,8}}?\s+{_CHANGE}\b"
    rf"|\bwhy\b(?:\s+[^\s?!]+){{1,6}}?\s+(?:was|were|got|has been|have been)\s+"
    rf"(?:[^\s?!]+\s+){{0,2}}?{_CHANGE}\b"
    r"|\bwhy\s+(?:is|are)\b[^?.!]+\b(?:like (?:this|that)|(?:this|that) way"
    r"|the way (?:it|they) (?:is|are)|designed|built (?:this|that) way)\b"
    r"|\bwhy\s+(?:does|do|did)\b[^?.!]+\b(?:behave|work|act|look|function)s?\s+"
    r"(?:like (?:this|that)|(?:this|that) way|the way (?:it|they) do(?:es)?|so)\b"
    r"|\bwhy\s+(?:does|do|is|are|can't|cannot)\b[^?.!]+\b(?:no longer|not \w+ anymore"
    r"|any more|anymore)\b"
    r"|\b(?:reason|motivation|rationale|backstory)\s+(?:for|behind)\s+(?:the\s+|this\s+|that\s+)?"
    rf"(?:[^\s?!]+\s+){{0,4}}?(?:{_CHANGE}|change|commit|rewrite|removal|addition|deprecation)\b",
    re.IGNORECASE,
)
# "why is there X", "why did X misbehave", "why was X racy", "why does X accept Y now": the
# reason behind a design or a past change, which the history records. A present-tense "why
# does X use Y" is a design question about the code as it is, and debugging questions ("why
# does X raise", "why would this fail", "why did my test fail") are code questions too.
_WHY_PAST = re.compile(
    r"\bwhy\s+(?:is|are)\s+there\b"
    r"|\bwhy\s+(?:did|didn't|was|wasn't|were|weren't|could|couldn't|had)\b",
    re.IGNORECASE,
)
_WHY_NOW = re.compile(
    r"\bwhy\s+(?:does|do|is|are|can|doesn't|don't|isn't|aren't|can't)\b[^?!\n]*"
    r"(?:\bnow\b|\bany ?more\b|\bno longer\b|\bthese days\b)"
    r"|\bwhy\s+can\b(?:\s+[^\s?!]+){1,6}?\s+be\b",
    re.IGNORECASE,
)
_PERSONAL = re.compile(r"\b(?:my|mine|i|i'm|i've|would|should|might)\b", re.IGNORECASE)
_DEBUG = re.compile(
    r"\b(?:raise[sd]?|throw[sn]?|threw|fail(?:s|ed|ing)?|errors?|crash\w*|hang\w*|"
    r"exception|traceback|segfault\w*|not work\w*|doesn't work|won't)\b",
    re.IGNORECASE,
)


def _why_reason(question: str) -> bool:
    """A "why" the patterns of `_WHY` miss, about a past change or a design's reason."""
    if _PERSONAL.search(question):
        return False
    return bool(_WHY_PAST.search(question)) or (
        bool(_WHY_NOW.search(question)) and not _DEBUG.search(question)
    )


_WHEN = re.compile(
    rf"\bwhen\s+(?:did|was|were|has|have|had)\b(?:\s+[^\s?!]+){{0,14}}?\s+{_CHANGE}\b"
    r"|\bwhen\s+(?:did|could|were|was)\b(?:\s+[^\s?!]+){0,10}?\s+(?:first|get|got|gain\w*"
    r"|learn\w*|let|allow\w*|support\w*|accept\w*|configur\w*|begin|began|correct\w*)\b"
    r"|\bsince when\b|\bhow long (?:has|have|ago)\b"
    r"|\bwhen\b[^?.!]*\blast\s+(?:changed|modified|touched|updated|edited)\b",
    re.IGNORECASE,
)
_WHO = re.compile(
    r"\bwho(?:'s| is| are| has| have| had)?\s+(?:\w+\s+){0,2}?"
    r"(?:last\s+|most\s+recently\s+|originally\s+|first\s+)?"
    r"(?:changed|modified|touched|wrote|written|edited|authored|added|introduced|removed|"
    r"deleted|refactored|rewrote|rewritten|maintains|maintain|owns|own|knows|know|"
    r"worked on|works on|work on|committed|broke|fixed|created|implemented|"
    r"(?:the\s+)?(?:expert|owner|maintainer|author)s?\b|responsible for)",
    re.IGNORECASE,
)
_WHICH = re.compile(
    r"\b(?:which|what)\s+(?:commit|commits|pr|prs|pull request|pull requests|merge request|"
    rf"change|changes|release|version|patch)\b[^?.!]*?\b{_CHANGE}\b"
    rf"|\bthe\s+(?:commit|pr|pull request)\s+(?:that|which)\b[^?.!]*?\b{_CHANGE}\b"
    r"|\bin which (?:release|version|commit)\b",
    re.IGNORECASE,
)
_SINCE = re.compile(
    r"\b(?:what|which|anything|list|show|summari[sz]e|tell me)\b[^?.!]*?"
    r"\b(?:changed|changes|is new|'s new|new in|happened|landed|merged|commits?)\b[^?.!]*?"
    r"(?:\bsince\b|\bafter\b|\bbetween\b|\b(?:in|from) the (?:last|past)\b"
    r"|\bover the (?:last|past)\b"
    r"|\bthis (?:week|month|year)\b|\blast (?:week|month|year|release|\d+ \w+)\b"
    r"|\brecently\b|\blately\b|\byesterday\b|\btoday\b)"
    r"|\b(?:recent|latest|last few)\s+(?:changes|commits)\b"
    r"|\bchangelog\b|\bwhat'?s new\b|\bwhat changed in\b|\bwhat has changed\b",
    re.IGNORECASE,
)
_LOG = re.compile(
    r"\b(?:history of|git log|commit log|commit history|change history|git blame|blame)\b"
    r"|\blast (?:change|commit|edit|modification)s? (?:to|of|on|in)\b"
    r"|\b(?:last|recently)\s+(?:changed|modified|touched|edited)\b",
    re.IGNORECASE,
)
_ORDER: tuple[tuple[HistoryKind, re.Pattern[str]], ...] = (
    ("who", _WHO),
    ("which", _WHICH),
    ("why", _WHY),
    ("when", _WHEN),
    ("since", _SINCE),
    ("log", _LOG),
)
_LAST = re.compile(r"\b(?:last|latest|most recent(?:ly)?)\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_RELATIVE = re.compile(
    r"\b(?:(?:in|over|during) the (?:last|past)|last|past)\s+(\d+|a|one|two|three|few)?\s*"
    r"(day|week|month|year)s?\b|\b(yesterday|today|this week|this month|this year)\b",
    re.IGNORECASE,
)
_SINCE_TAG = re.compile(
    r"\b(?:since|after|from)\s+(?:release\s+|version\s+|tag\s+)?([\w.+-]*\d[\w.+-]*)", re.I
)
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


@dataclass(frozen=True, slots=True)
class HistoryIntent:
    kind: HistoryKind
    last: bool = False  # "who last changed", "the last change to": the newest commit leads
    since_tag: str = ""  # a tag (or version) named after "since"
    since_time: int = 0  # unix time the question starts from (0: none)


def history_intent(text: str, now: datetime | None = None) -> HistoryIntent | None:
    """The history question `text` asks, or None for a code question."""
    question = " ".join(text.split())
    if not question or len(question) > 2000:
        return None  # a pasted report is a code question, whatever words it holds
    kind = next((k for k, pattern in _ORDER if pattern.search(question)), None)
    if kind is None and _why_reason(question):
        kind = "why"
    if kind is None and asks_last_change(question):
        return HistoryIntent("who", last=True)
    if kind is None:
        return None
    tag = _SINCE_TAG.search(question)
    since_time = _since_time(question, now or datetime.now(UTC))
    last = kind in ("who", "log", "when") and bool(_LAST.search(question))
    return HistoryIntent(kind, last, tag.group(1).rstrip(".") if tag else "", since_time)


def _since_time(question: str, now: datetime) -> int:
    iso = _ISO_DATE.search(question)
    if iso:
        try:
            year, month, day = (int(g) for g in iso.groups())
            return int(datetime(year, month, day, tzinfo=UTC).timestamp())
        except ValueError:
            return 0
    relative = _RELATIVE.search(question)
    if relative is None:
        return 0
    word = (relative.group(3) or "").lower()
    if word:
        days = {"yesterday": 1, "today": 1, "this week": 7, "this month": 31, "this year": 366}
        return int((now - timedelta(days=days[word])).timestamp())
    count = relative.group(1) or "1"
    number = _COUNTS.get(count.lower()) or (int(count) if count.isdigit() else 1)
    return int((now - timedelta(days=number * _UNIT_DAYS[relative.group(2).lower()])).timestamp())
