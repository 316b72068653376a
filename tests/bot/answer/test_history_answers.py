"""History answers with a model (the fake OpenAI server) and without, and how every
surface renders commit citations and "last changed" notes."""

from __future__ import annotations

import pytest

from adapters.cli.render import print_footer
from adapters.discord.render import render_answer
from adapters.slack.render import sources_text
from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.models import Question
from tests.servers.openai_fake import FakeOpenAI
from tests.support.gitrepo import git
from tests.support.history_repo import build
from tests.support.streaming import use_model

WEB = "https://github.com/demo/shop"


@pytest.fixture
def demo(make_repo):  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = build(repo)
    git(repo.path, "remote", "add", "origin", f"{WEB}.git")
    return repo, shas


def test_with_a_model_commits_are_numbered_sources_cited_like_code(
    demo, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    repo, shas = demo
    with FakeOpenAI() as fake:
        fake.chat_reply = lambda body: "It was renamed to say what it holds [1]."
        use_model(fake, monkeypatch)
        core = Core.from_settings(Settings(), FileConfig())
        core.index_repo(str(repo.path), name="demo")
        answer = core.answer(Question("why was core renamed to functions?", frozenset({"demo"})))
        prompt = fake.bodies("/chat/completions")[-1]["messages"][-1]["content"]
        core.close()
    assert answer.mode == "llm"
    first = answer.citations[0]
    assert first.kind == "commit" and first.sha == shas["rename"]
    assert first.url == f"{WEB}/commit/{shas['rename']}"
    assert f"({shas['rename'][:8]})" in answer.text  # [1] became the commit's label
    assert f"commit {shas['rename'][:8]}" in prompt and "Rename core to functions" in prompt


def test_without_a_model_code_citations_say_what_last_changed_them(demo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = demo
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="demo")
    answer = core.ask("where is f3 defined?", CLI)
    code = [c for c in answer.citations if c.kind == "code" and c.path == "pkg/functions.py"]
    assert code and code[0].changed is not None
    assert code[0].changed.url.startswith(f"{WEB}/commit/")
    since = core.ask("what changed since last week?", CLI)
    assert since.citations == () or all(c.kind == "commit" for c in since.citations[:1])
    merged = core.ask("which PR merged the multiply change in f5?", CLI)
    assert merged.citations and merged.citations[0].changed is not None
    pr = [c for c in merged.citations if c.sha == shas["merge"]]
    assert pr and pr[0].changed is not None and pr[0].changed.pr_url == f"{WEB}/pull/34"
    core.close()


def test_every_surface_links_commits_and_notes(demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    repo, shas = demo
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="demo")
    answer = core.ask("which PR merged the multiply change in f5?", CLI)
    core.close()
    merge = next(c for c in answer.citations if c.sha == shas["merge"])
    slack = sources_text(answer.citations)
    assert f"<{WEB}/commit/{shas['merge']}|{shas['merge'][:8]}>" in slack
    discord = "\n".join(render_answer(answer))
    assert f"[{shas['merge'][:8]}](<{merge.url}>)" in discord
    assert f"(<{WEB}/pull/34>)" in discord
    from rich.console import Console

    console = Console(width=200, force_terminal=False)
    print_footer(console, answer, details=False)
    out = capsys.readouterr().out
    assert f"{shas['merge'][:8]}  {merge.url}" in out and "#34" in out
