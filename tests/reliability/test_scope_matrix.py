"""Channel scopes never leak: every (place, repository) pair, asked for that repository's marker.

Four repositories each hold one unique identifier (a "marker") and some code
that all of them share. codecite.toml maps six channels to different subsets,
a Discord guild to another, sets a default scope for unmapped channels and a
DM allowlist. Group DMs are DMs; conversations shared with other organisations,
or whose kind is unknown, see only what their own mapping gives. The operator's
terminal sees every repository whatever the default scope; a terminal chat
narrowed with --repo sees only that one. For every place and every repository we ask for the marker and
search for it, and count leaks: a citation, search hit, freshness line, prompt
text or `repos` line from a repository outside the place's scope. Leaks must be
0, and every in-scope marker must be found, in extractive and in LLM mode.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from bot.config import ChannelConfig, FileConfig, LimitsConfig, Settings
from bot.core import CLI, Context, Core
from bot.errors import NotIndexedError, PermissionDenied, ScopeError
from tests.servers.openai_fake import FakeOpenAI
from tests.support.gitrepo import GitRepo

MARKERS = {
    "atlas": "zebrafish_ledger_reconcile",
    "borealis": "quasar_invoice_splitter",
    "cobalt": "marmot_cache_evictor",
    "dynamo": "narwhal_token_rotator",
}
SHARED = '''"""Retries shared by every service."""


def retry_with_backoff(call, attempts=3):
    """Call `call` until it succeeds, waiting longer after each failure."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            if attempt == attempts - 1:
                raise
'''

CONFIG = FileConfig(
    channels={
        "C_ATLAS": ChannelConfig(repos=("atlas",)),
        "C_AB": ChannelConfig(repos=("atlas", "borealis")),
        "C_CD": ChannelConfig(repos=("cobalt", "dynamo")),
        "C_ALL": ChannelConfig(repos=tuple(MARKERS)),
        "C_BOREALIS_GHOST": ChannelConfig(repos=("borealis", "ghost")),  # ghost: never indexed
        "111": ChannelConfig(repos=("dynamo",)),  # a Discord channel
        "G9": ChannelConfig(repos=("borealis", "cobalt")),  # a Discord guild
        "C_GHOST": ChannelConfig(repos=("ghost",)),  # must not fall back to everything
        "G_MPIM": ChannelConfig(repos=("dynamo",)),  # a group DM the team mapped
    },
    default_scope=("atlas", "cobalt"),
    dm_allowlist=("U_OK",),
    # One user asks 88 questions here: this file tests scopes, test_limits tests limits.
    limits=LimitsConfig(per_user_per_minute=0, per_channel_per_minute=0, daily_answers=0),
)


@dataclass(frozen=True)
class Place:
    name: str
    ctx: Context
    scope: frozenset[str]  # what it may see; empty when it may see nothing
    refusal: type[Exception] | None = None  # raised for every question asked here


PLACES = (
    Place("slack #atlas", Context("slack", "U1", "C_ATLAS", "T1"), frozenset({"atlas"})),
    Place("slack #ab", Context("slack", "U1", "C_AB", "T1"), frozenset({"atlas", "borealis"})),
    Place("slack #cd", Context("slack", "U1", "C_CD", "T1"), frozenset({"cobalt", "dynamo"})),
    Place("slack #all", Context("slack", "U1", "C_ALL", "T1"), frozenset(MARKERS)),
    Place(
        "slack #borealis+ghost",
        Context("slack", "U1", "C_BOREALIS_GHOST", "T1"),
        frozenset({"borealis"}),
    ),
    Place("discord #111", Context("discord", "U1", "111", "G1"), frozenset({"dynamo"})),
    Place(
        "discord guild G9", Context("discord", "U1", "222", "G9"), frozenset({"borealis", "cobalt"})
    ),
    Place(
        "slack #ghost",
        Context("slack", "U1", "C_GHOST", "T1"),
        frozenset(),
        refusal=NotIndexedError,
    ),
    Place(
        "slack unmapped (default)",
        Context("slack", "U1", "C_ELSEWHERE", "T1"),
        frozenset({"atlas", "cobalt"}),
    ),
    Place(
        "DM allowed",
        Context("slack", "U_OK", "D1", "T1", is_dm=True),
        frozenset({"atlas", "cobalt"}),
    ),
    Place(
        "DM refused",
        Context("discord", "U_NO", "D2", is_dm=True),
        frozenset(),
        refusal=PermissionDenied,
    ),
    Place(
        "group DM refused",
        Context("slack", "U_NO", "G_OTHER", "T1", is_dm=True),
        frozenset(),
        refusal=PermissionDenied,
    ),
    Place(
        "group DM allowed",
        Context("slack", "U_OK", "G_OTHER", "T1", is_dm=True),
        frozenset({"atlas", "cobalt"}),
    ),
    Place(  # an explicit mapping of the conversation decides, allowlist or not
        "group DM mapped",
        Context("slack", "U_NO", "G_MPIM", "T1", is_dm=True),
        frozenset({"dynamo"}),
    ),
    Place(
        "shared with another org, unmapped",
        Context("slack", "U_OK", "C_SHARED", "T1", audience="external"),
        frozenset(),
        refusal=PermissionDenied,
    ),
    Place(
        "shared with another org, mapped",
        Context("slack", "U_EXT", "C_AB", "T1", audience="external"),
        frozenset({"atlas", "borealis"}),
    ),
    Place(
        "kind unknown, unmapped",
        Context("slack", "U_OK", "G_UNKNOWN", "T1", is_dm=True, audience="unknown"),
        frozenset(),
        refusal=PermissionDenied,
    ),
    Place(
        "kind unknown, mapped",
        Context("slack", "U_NO", "C_CD", "T1", is_dm=True, audience="unknown"),
        frozenset({"cobalt", "dynamo"}),
    ),
    # The operator at the terminal: default_scope is for chat conversations, not for them.
    Place("terminal", CLI, frozenset(MARKERS)),
    Place("terminal chat --repo", replace(CLI, repos=frozenset({"dynamo"})), frozenset({"dynamo"})),
)


@dataclass
class Tally:
    pairs: int = 0
    prompts: int = 0  # questions that reached the model (LLM mode)
    leaks: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("scope-matrix")
    paths = {}
    for name, marker in MARKERS.items():
        repo = GitRepo(root / name)
        repo.write(f"src/{marker}.py", _marker_module(marker))
        repo.write("common/retry.py", SHARED)
        repo.write("README.md", f"# {name}\n\nThe service whose entry point is `{marker}`.\n")
        repo.commit(name)
        paths[name] = repo.path
    return paths


@pytest.fixture(params=["extractive", "llm"])
def core(
    request: pytest.FixtureRequest, repos: dict[str, Path]
) -> Iterator[tuple[Core, FakeOpenAI]]:
    with FakeOpenAI() as fake:
        env = {}
        if request.param == "llm":
            env = {"OPENAI_API_KEY": "sk-test-scope", "OPENAI_BASE_URL": fake.base_url}
        core = Core.from_settings(Settings(**env), CONFIG)
        for name, path in repos.items():
            core.index_repo(str(path), name=name)
        yield core, fake
        core.close()


def _marker_module(marker: str) -> str:
    return (
        f"from common.retry import retry_with_backoff\n\n\n"
        f"def {marker}(records):\n"
        f'    """The one place that defines {marker}."""\n'
        f"    return retry_with_backoff(lambda: sorted(records))\n"
    )


def test_every_place_sees_exactly_its_repositories(core: tuple[Core, FakeOpenAI]) -> None:
    bot, fake = core
    tally = Tally()
    for place in PLACES:
        for repo, marker in MARKERS.items():
            tally.pairs += 1
            _ask_for_marker(bot, fake, place, repo, marker, tally)
            _search_for_marker(bot, place, repo, marker, tally)
    assert tally.pairs == len(PLACES) * len(MARKERS) == 80
    answerable = sum(len(MARKERS) for p in PLACES if p.refusal is None)
    assert tally.prompts == (answerable if bot.llm is not None else 0)
    assert tally.leaks == [], f"{len(tally.leaks)} leaks in {tally.pairs} pairs"
    assert tally.missed == [], f"{len(tally.missed)} in-scope markers not found"


def _ask_for_marker(
    bot: Core, fake: FakeOpenAI, place: Place, repo: str, marker: str, tally: Tally
) -> None:
    question = f"where is {marker} defined?"
    sent = len(fake.bodies("/chat/completions"))
    if place.refusal is not None:
        with pytest.raises(place.refusal):
            bot.ask(question, place.ctx)
        return
    answer = bot.ask(question, place.ctx)
    outside = [c.label for c in answer.citations if c.repo not in place.scope]
    outside += [f.repo for f in answer.freshness if f.repo not in place.scope]
    # What the model was shown, apart from the question itself (which names the marker).
    bodies = fake.bodies("/chat/completions")[sent:]
    tally.prompts += len(bodies)
    shown = json.dumps(bodies).replace(question, "")
    outside += [m for r, m in MARKERS.items() if r not in place.scope and m in shown]
    outside += [m for r, m in MARKERS.items() if r not in place.scope and m in answer.text]
    tally.leaks += [f"{place.name} / {repo}: {o}" for o in outside]
    if repo in place.scope:
        expected = f"src/{marker}.py"
        if not any(c.repo == repo and c.path == expected for c in answer.citations):
            tally.missed.append(f"{place.name} / {repo}: answer did not cite {expected}")


def _search_for_marker(bot: Core, place: Place, repo: str, marker: str, tally: Tally) -> None:
    if place.refusal is not None:
        with pytest.raises(place.refusal):
            bot.search(marker, place.ctx, top_k=50)
        return
    hits = bot.search(marker, place.ctx, top_k=50)
    tally.leaks += [
        f"{place.name} / {repo}: hit {h.chunk.repo}:{h.chunk.path}"
        for h in hits
        if h.chunk.repo not in place.scope
    ]
    if repo in place.scope:
        top = hits[0].chunk if hits else None
        if top is None or (top.repo, top.path) != (repo, f"src/{marker}.py"):
            tally.missed.append(f"{place.name} / {repo}: search top hit was {top}")
    # Naming a repository outside the scope is refused, never answered.
    narrowed = frozenset({repo})
    try:
        named = bot.search(marker, place.ctx, repos=narrowed)
    except ScopeError:
        if repo in place.scope:
            tally.missed.append(f"{place.name} / {repo}: naming it was refused")
        return
    tally.leaks += [
        f"{place.name} / {repo}: named hit {h.chunk.repo}:{h.chunk.path}"
        for h in named
        if h.chunk.repo not in place.scope or h.chunk.repo != repo
    ]
    if repo not in place.scope:
        tally.leaks.append(f"{place.name} / {repo}: naming an outside repository was not refused")


def test_repos_and_status_list_only_what_a_place_may_see(core: tuple[Core, FakeOpenAI]) -> None:
    bot, _ = core
    for place in PLACES:
        if place.refusal is PermissionDenied:
            with pytest.raises(PermissionDenied):
                bot.run_command("repos", place.ctx)
            continue
        for command in ("repos", "status"):
            text = bot.run_command(command, place.ctx).text
            shown = {name for name in MARKERS if name in text}
            assert shown == place.scope, f"{place.name}: {command} showed {sorted(shown)}"
