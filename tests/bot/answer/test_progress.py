"""What an answer's status line says while it is prepared: the question's subject, the
sources found, and the time HyDE and pruning took; a failing status never fails an answer."""

from __future__ import annotations

import re

import pytest

from bot.answer.progress import Reporter, reading, searching, writing
from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.retrieval.hyde import PROMPT as HYDE_PROMPT
from bot.retrieval.prune import PROMPT as PRUNE_PROMPT
from bot.retrieval.query import analyze
from tests.servers.openai_fake import FakeOpenAI
from tests.support.shop import build_shop

QUESTION = "how does apply_discount round the total?"


def _reply(body: dict) -> str:
    system = body["messages"][0]["content"]
    if system == HYDE_PROMPT:
        return "def apply_discount(total, pct):\n    return round(total * (1 - pct), 2)"
    if system == PRUNE_PROMPT:
        return "1"
    numbers = re.findall(r' n="(\d+)"', body["messages"][-1]["content"])
    return f"It rounds to cents [{numbers[0]}]." if numbers else "Not found."


def _core(fake: FakeOpenAI | None, repo, **extra: str) -> Core:
    env = {"CODECITE_EMBED_MODEL": "none", **extra}
    if fake is not None:
        env |= {"OPENAI_API_KEY": "sk-test-abcdef", "OPENAI_BASE_URL": fake.base_url}
    core = Core.from_settings(Settings(**env), FileConfig())
    core.index_repo(str(repo.path), name="shop")
    return core


def test_the_subject_is_what_the_question_names() -> None:
    assert searching(analyze("where is `apply_discount` used?")) == "searching apply_discount…"
    assert searching(analyze("how does billing work?")).startswith("searching billing")
    assert searching(analyze("?")) == "searching…"
    long = searching(analyze("where is " + "a_really_long_identifier_name_" * 4 + " set?"))
    assert len(long) <= len("searching …") + 40


def test_model_stage_times_are_named_only_when_they_ran() -> None:
    assert reading(6, {"search": 0.2}) == "reading 6 sources…"
    assert reading(1, {"search": 0.2, "hyde": 0.44}) == "reading 1 source… (HyDE 0.4 s)"
    both = writing(4, {"hyde": 0.44, "prune": 0.81})
    assert both == "writing the answer from 4 sources… (HyDE 0.4 s, pruning 0.8 s)"


def test_a_failing_status_callback_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    def broken(status: str) -> None:
        raise OSError("the status line is gone")

    Reporter(broken)("searching…")  # no exception
    Reporter(None)("searching…")
    assert "could not show the status" in caplog.text


def test_statuses_follow_the_stages_with_hyde_and_pruning_times(make_repo) -> None:
    repo = make_repo("shop")
    build_shop(repo)
    seen: list[str] = []
    with FakeOpenAI() as fake:
        fake.chat_reply = _reply
        core = _core(fake, repo, CODECITE_HYDE="1", CODECITE_PRUNE="1")
        stream = core.ask_stream(QUESTION, CLI, progress=seen.append)
        assert seen and not seen[-1].startswith("searching")  # all said before the text
        said_before_text = list(seen)
        text = "".join(stream)
        answer = stream.answer
    assert said_before_text == seen  # nothing more once the model writes
    assert seen[0] == "searching apply_discount…"
    assert re.fullmatch(r"reading \d+ sources?… \(HyDE \d+\.\d s\)", seen[1]), seen
    assert re.fullmatch(r"choosing among \d+ sources…", seen[2]), seen
    assert re.fullmatch(
        r"writing the answer from \d+ sources?… \(HyDE \d+\.\d s, pruning \d+\.\d s\)", seen[3]
    ), seen
    assert len(seen) == 4
    assert "rounds to cents" in text and answer.citations
    assert {"hyde", "prune", "search", "total"} <= set(answer.timings)
    assert answer.timings["hyde"] <= answer.timings["search"]  # it ran inside the search


def test_without_a_model_the_statuses_stop_at_reading(make_repo) -> None:
    repo = make_repo("shop")
    build_shop(repo)
    seen: list[str] = []
    core = _core(None, repo)
    stream = core.ask_stream(QUESTION, CLI, progress=seen.append)
    assert stream.answer.mode == "extractive"
    assert seen[0] == "searching apply_discount…"
    assert [s.split(" ")[0] for s in seen] == ["searching", "reading"]


def test_plain_words_are_shown_as_asked_not_as_stems() -> None:
    question = "how are failed webhook deliveries retried with backoff?"
    assert searching(analyze(question)) == "searching failed webhook deliveries…"
