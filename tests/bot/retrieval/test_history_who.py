""" "Who made the last change to X" in the phrasings without a change verb after "who"."""

from __future__ import annotations

import pytest

from bot.retrieval.history_intent import history_intent

LAST_CHANGE = [
    "who made the most recent change to BytecodeCache.get_cache_key, and when?",
    "who was the last to touch Frame.copy?",
    "the last person to edit Entry.Dup",
    "who did the latest edit of Mul?",
    "which author wrote the newest commit on getattr?",
    "who is the most recent author of toLogrusLevel?",
    "who committed the last fix to Entry.logln?",
    "Who pushed the latest update to the router?",
]
CODE = [
    "who calls the last handler?",
    "who handles the latest request?",
    "what is the last argument of make_response?",
    "where is the most recent entry kept?",
    "which function returns the latest commit?",
]


@pytest.mark.parametrize("question", LAST_CHANGE)
def test_last_change_phrasings_ask_who(question: str) -> None:
    intent = history_intent(question)
    assert intent is not None and intent.kind in ("who", "log") and intent.last


@pytest.mark.parametrize("question", CODE)
def test_code_questions_about_last_things_stay_code(question: str) -> None:
    assert history_intent(question) is None
