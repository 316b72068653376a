"""History questions asked on every surface: one repository, one reference answer, and the
checks that what a platform received cites the same commits in the same order, each with its
date, author, subject and its commit and pull-request links in that platform's link syntax.

The repository is `history_repo.build` (a squash subject "(#12)", "Merge pull request #34",
a rename, a moved function) with a tag `v0.1` on the #12 commit and a GitHub origin, so every
commit and pull request has a permalink built from the remote URL alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.config import FileConfig, Settings
from bot.context import Context
from bot.core import Core
from bot.models import Answer
from tests.support.gitrepo import GitRepo, git
from tests.support.history_repo import build

WEB = "https://github.com/acme/demo"
TAG = "v0.1"
WHY = "why was core renamed to functions?"
WHEN = "when did f2 change?"
WHO = "who last changed f5?"
SINCE = f"what changed since {TAG}?"
CODE = "where is f2 defined?"  # a code answer: its citation says what last changed it
QUESTIONS = (WHY, WHEN, WHO, SINCE, CODE)

# How each platform writes a link (label, url); the terminal prints the URL itself.
LinkFormat = Callable[[str, str], str]
SLACK: LinkFormat = lambda label, url: f"<{url}|{label}>"  # noqa: E731
DISCORD: LinkFormat = lambda label, url: f"[{label}](<{url}>)"  # noqa: E731
TERMINAL: LinkFormat = lambda label, url: f"{label} <{url}>"  # noqa: E731
TERMINAL_SOURCE: LinkFormat = lambda label, url: f"{label} {url}"  # a source: label, then URL  # noqa: E731
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # bold and dim: styles, not text
_SOURCE = re.compile(r'<source-[0-9a-f]+ n="(\d+)" at="([^"]*)"')


@dataclass(frozen=True, slots=True)
class History:
    home: Path  # a data directory with `demo` indexed, history included
    repo: Path
    shas: dict[str, str]


def build_history(root: Path) -> tuple[GitRepo, dict[str, str]]:
    """The repository, under `root/demo`, and `build`'s named shas."""
    repo = GitRepo(root / "demo")
    shas = build(repo)
    git(repo.path, "tag", "-a", TAG, "-m", f"Release {TAG}", shas["tweak"])
    git(repo.path, "remote", "add", "origin", f"{WEB}.git")
    return repo, shas


def indexed_history(root: Path) -> History:
    """`build_history`, indexed with no model into `root/home` (extractive answers)."""
    repo, shas = build_history(root)
    home = root / "home"
    core = Core.from_settings(_no_model(home), FileConfig())
    try:
        core.index_repo(str(repo.path), name="demo")
    finally:
        core.close()
    return History(home, repo.path, shas)


def _no_model(home: Path) -> Settings:
    # Init arguments beat the environment: no model, no embeddings, whatever the shell has.
    return Settings(  # type: ignore[call-arg]
        CODECITE_HOME=home, OPENAI_API_KEY=None, OPENAI_BASE_URL=None, CODECITE_INDEX="local"
    )


def reference(home: Path) -> dict[str, Answer]:
    """Each question answered by the shared core itself: what every platform must show."""
    core = Core.from_settings(_no_model(home), FileConfig())
    try:
        ctx = Context(platform="test", user="reference")
        return {q: core.ask(q, ctx) for q in QUESTIONS}
    finally:
        core.close()


def check_gold(answers: dict[str, Answer], shas: dict[str, str]) -> None:
    """The reference answers are about the right commits (so matching them means something)."""
    cited = {q: [c.sha for c in a.citations if c.kind == "commit"] for q, a in answers.items()}
    assert cited[WHY][0] == shas["rename"], cited[WHY]
    assert cited[WHEN][0] == shas["tweak"], cited[WHEN]
    assert cited[WHO][0] == shas["side"], cited[WHO]  # f5's lines: the side branch of #34
    after = {shas[n] for n in ("side", "main", "merge", "rename", "move", "delete")}
    assert cited[SINCE] and set(cited[SINCE]) <= after, cited[SINCE]
    assert shas["tweak"] not in cited[SINCE] and shas["first"] not in cited[SINCE]
    prs = {c.changed.pr for a in answers.values() for c in a.citations if c.changed}
    assert {12, 34} <= prs  # the squash subject and the merge subject both name their PR
    [code] = [c for c in answers[CODE].citations if c.symbol.endswith("f2")][:1]
    assert code.kind == "code" and code.changed is not None
    assert code.changed.sha == shas["tweak"]  # the move above it changed no line of f2


def check_rendered(received: str, answer: Answer, fmt: LinkFormat, source: LinkFormat) -> None:
    """What a platform received (`received`: the answer as sent, sources included) cites
    `answer`'s commits in its order, each with date, author, subject and links in `fmt`; a
    code citation carries "last changed <linked sha>" (and its PR link when it has one)."""
    flat = " ".join(received.split())  # the terminal wraps long lines
    commits = [c for c in answer.citations if c.kind == "commit"]
    starts = [flat.find(source(c.sha[:8], c.url)) for c in commits]
    assert all(s >= 0 for s in starts), (starts, received)
    assert starts == sorted(starts), "commits out of order"
    ends = [*starts[1:], len(flat)][: len(starts)]
    for c, start, end in zip(commits, starts, ends, strict=True):
        entry = flat[start:end]
        ref = c.changed
        assert ref is not None and c.url == f"{WEB}/commit/{c.sha}"
        assert f" · {ref.date} · {ref.author} · " in entry, entry
        words = [w for w in re.split(r"[\s()]+", ref.subject) if w and not w.startswith("#")]
        assert all(w in entry for w in words), (ref.subject, entry)
        if ref.pr:
            assert fmt(f"#{ref.pr}", f"{WEB}/pull/{ref.pr}") in entry, entry
    for c in (c for c in answer.citations if c.kind == "code" and c.changed):
        assert c.changed is not None
        changed = fmt(c.changed.sha[:8], f"{WEB}/commit/{c.changed.sha}")
        at = flat.find(source(c.label, c.url))
        assert at >= 0 and f"last changed {changed} ({c.changed.date}" in flat[at:], received
        if c.changed.pr:
            assert fmt(f"#{c.changed.pr}", f"{WEB}/pull/{c.changed.pr}") in flat[at:]


def cite_two_commits_and_the_code(body: dict[str, Any]) -> str:
    """A fake model's reply (`FakeOpenAI.chat_reply`) as a model writes one: the first two
    commit sources it was given, then every code source, as `[n]`."""
    prompt = str(body["messages"][-1]["content"])
    sources = _SOURCE.findall(prompt)
    commits = [n for n, at in sources if at.startswith("demo: commit ")][:2]
    code = [n for n, at in sources if not at.startswith("demo: commit ")]
    return f"It changed in {' and '.join(f'[{n}]' for n in commits)}; the code: " + " ".join(
        f"[{n}]" for n in code
    )


def check_body(body: str, answer: Answer, source: LinkFormat) -> None:
    """The answer's own text names each cited commit by its linked label."""
    for c in answer.citations:
        if c.kind == "commit":
            assert source(c.sha[:8], c.url) in body, (c.sha, body)


def slack_sources(text: str) -> str:
    """A Slack message's `*Sources*` section (its mrkdwn text)."""
    assert "*Sources*" in text, text
    return text.split("*Sources*", 1)[1]


def discord_sources(content: str) -> str:
    """A Discord answer's small print: the `-# ` lines (sources, then freshness)."""
    return "\n".join(line for line in content.splitlines() if line.startswith("-# "))


def terminal_sources(output: str) -> str:
    """The terminal's `Sources` block (up to the end of the answer)."""
    lines = _ANSI.sub("", output).replace("\r\n", "\n").split("\n")
    assert "Sources" in lines, output
    return "\n".join(lines[lines.index("Sources") + 1 :])
