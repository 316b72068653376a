"""bench/streaming.py end to end on a tiny repository with two questions per surface, so it
cannot rot: every surface, streaming on and off, figures counted from the fakes' records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.stream_answers import answer_text, expected_markers
from bench.stream_measure import is_note, sentence_check
from bot.runtime.queue import in_line
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop

ROOT = Path(__file__).resolve().parents[2]
SURFACES = (
    "slack-http",
    "slack-socket",
    "slack-command",
    "slack-refused",
    "discord-mention",
    "discord-slash",
)
STREAMED_ROUTES = {
    "slack-http": "chat.startStream",
    "slack-socket": "chat.startStream",
    "slack-command": "postMessage+update",
    "slack-refused": "postMessage+update",
    "discord-mention": "reply+edits",
    "discord-slash": "followup+edits",
}
WHOLE_ROUTES = {
    "slack-http": "postMessage",
    "slack-socket": "postMessage",
    "slack-command": "postMessage",
    "slack-refused": "postMessage",
    "discord-mention": "reply",
    "discord-slash": "followup",
}


@pytest.mark.slow
@pytest.mark.timeout(300)  # twelve short runs, each starting its bot; slower on a busy machine
def test_every_surface_streamed_and_whole(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "shop")
    build_shop(repo)
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable, str(ROOT / "bench" / "streaming.py"),
            "--corpus", str(repo.path), "--cases", str(tmp_path / "none.jsonl"),
            "--questions", "2", "--concurrency", "2",
            "--tokens", "60", "--rate", "40", "--first-token", "0.05", "--out", str(out),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| surface" in done.stdout and "first text p95" in done.stdout
    result = json.loads(out.read_text())
    assert result["questions"] == 2 and result["pace"]["tokens"] == 60
    runs = {(r["surface"], r["stream"]): r for r in result["runs"]}
    assert set(runs) == {(s, mode) for s in SURFACES for mode in (True, False)}
    for (surface, streamed), run in runs.items():
        assert run["n"] == 2 and run["unfinished"] == 0, (surface, streamed)
        assert run["missing_sentences"] == run["repeated_sentences"] == 0, (surface, streamed)
        routes = STREAMED_ROUTES if streamed else WHOLE_ROUTES
        assert run["routes"] == {routes[surface]: 2}, (surface, streamed)
        for answer in run["answers"]:
            assert answer["first_text"] is not None and answer["final"] is not None
            assert answer["first_text"] <= answer["final"]  # order, not speed
            assert answer["calls"] == sum(answer["by_call"].values())
            assert answer["calls"] > answer["text_calls"] >= 1
    # Counted from real calls, per answer:
    mention = runs[("slack-http", True)]["answers"][0]["by_call"]
    assert mention["chat.startStream"] == mention["chat.stopStream"] == 1
    assert mention["reactions.add"] == mention["reactions.remove"] == 1
    whole = runs[("slack-socket", False)]["answers"][0]["by_call"]
    assert whole["chat.postMessage"] == 1 and "chat.startStream" not in whole
    assert runs[("slack-refused", True)]["refused_calls"].get("not_allowed", 0) >= 1
    assert runs[("slack-http", True)]["refused_calls"] == {}
    reply = runs[("discord-mention", True)]["answers"][0]["by_call"]
    assert reply["PUT /channels/{id}/messages/{id}/reactions/👀/@me"] == 1
    assert reply["PATCH /channels/{id}/messages/{id}"] >= 1
    slash = runs[("discord-slash", False)]["answers"][0]["by_call"]
    assert slash["POST /interactions/{id}/{id}/callback"] == 1  # deferred ("thinking")


def test_the_model_answer_and_its_sentence_check() -> None:
    text = answer_text(["1", "2", "3"], 600)
    assert len(text) <= 600 * 4 and "```python" in text
    markers = expected_markers(600)
    assert markers[:2] == ["Step 1:", "Step 2:"] and len(markers) == len(set(markers))
    assert sentence_check(text, markers) == (0, 0)
    assert sentence_check(text.replace("Step 2:", "Step two:"), markers) == (1, 0)
    assert sentence_check(text + "\nStep 3: again", markers) == (0, 1)
    assert is_note(in_line(3)) and not is_note(text)
