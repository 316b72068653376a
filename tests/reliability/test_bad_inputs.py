"""The bad-input catalogue (issue 8): each bad input gets one clear line, and nothing is lost.

Every case starts from a data directory where the `shop` repository is indexed,
an answer was rated and a run was logged. The bad input goes through the real
CLI in a subprocess (`python -m adapters.cli.main`), as a user types it; where
the input also reaches the core another way, the same input goes through the
real Core in-process. Then the shop must answer exactly as before: same text,
citations, hits, rating and run history (minus what the case itself destroyed,
e.g. the votes inside a feedback file overwritten with garbage).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Context, Core
from bot.errors import (
    BotError,
    NotIndexedError,
    QuestionError,
    ScopeError,
    SourceError,
)
from bot.llm.embedding_cache import EmbeddingCache
from tests.servers.openai_fake import FakeOpenAI
from tests.support.gitrepo import GIT_ENV, GitRepo
from tests.support.shop import build_shop

ROOT = Path(__file__).resolve().parents[2]
SLACK = Context(platform="slack", user="U1", channel="C1")
GARBAGE = bytes(range(256)) * 64  # 16 KB that no SQLite header starts with
QUESTIONS = ("where do we retry failed webhooks?", "how is the monthly amount for seats computed?")
HUGE_QUESTION = "why " * 9_999 + "why?"  # 40,000 characters
LATIN_1_SOURCE = "# caf\xe9 cr\xe8me\ndef latin_marker():\n    return 1\n".encode("latin-1")


Check = Callable[["World"], None]


@dataclass(frozen=True)
class World:
    """One case's data directory and scratch space, and the shop it indexed."""

    tmp: Path
    shop: GitRepo
    fake_url: str | None = None  # the fake OpenAI service, when the case uses one

    @property
    def home(self) -> Path:
        return self.tmp / "home"

    @property
    def env(self) -> dict[str, str]:
        env = {"CODECITE_HOME": str(self.home)}
        if self.fake_url is not None:
            env |= {"OPENAI_API_KEY": "sk-test-bad-inputs", "OPENAI_BASE_URL": self.fake_url}
        return env

    def repo(self, name: str) -> GitRepo:
        return GitRepo(self.tmp / name)

    def core(self) -> Core:
        return Core.from_settings(Settings(**self.env), FileConfig())


@dataclass(frozen=True)
class Snapshot:
    state: tuple[str, str, int] | None  # shop's commit, branch, files
    answers: tuple[tuple[str, str, tuple[str, ...]], ...] | None  # mode, text, citation labels
    hits: tuple[tuple[str, str, int, int, float], ...] | None
    votes: tuple[tuple[str, int], ...] | None
    last_run: str | None  # commit of shop's latest run


def snapshot(world: World) -> Snapshot:
    core = world.core()
    try:
        shop = frozenset({"shop"})
        state = next(s for s in core.index.repo_states() if s.name == "shop")
        answers = tuple(
            (a.mode, a.text, tuple(c.label for c in a.citations))
            for a in (core.ask(q, CLI, repos=shop) for q in QUESTIONS)
        )
        hits = tuple(
            (h.chunk.repo, h.chunk.path, h.chunk.start_line, h.chunk.end_line, round(h.score, 9))
            for h in core.search("retry webhook charge customer", CLI, repos=shop, top_k=20)
        )
        votes = tuple((r.question, r.vote) for r in core.feedback.list())
        last = core.runs.last("shop")
        return Snapshot(
            (state.commit, state.branch, state.files),
            answers,
            hits,
            votes,
            last.commit if last else "",
        )
    finally:
        core.close()


def build_baseline(world: World) -> Snapshot:
    """The shop indexed, one answer rated, one run logged."""
    core = world.core()
    try:
        core.index_repo(str(world.shop.path), name="shop")
        answer = core.ask(QUESTIONS[0], CLI)
        answer_id = core.feedback.record_answer(
            platform="slack", channel="C1", asker="U1", question=QUESTIONS[0], answer=answer
        )
        assert core.feedback.record_vote(answer_id, "U2", 1)
    finally:
        core.close()
    before = snapshot(world)
    assert before.answers and before.answers[0][2], "the baseline must cite something"
    assert before.votes == ((QUESTIONS[0], 1),)
    return before


def isolate(mp: pytest.MonkeyPatch) -> None:
    """What conftest does per test, for this module's shared set-up (which runs before it)."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "PINECONE_", "SLACK_", "DISCORD_", "CODECITE_", "GITHUB_")):
            mp.delenv(name)
    for name, value in GIT_ENV.items():
        mp.setenv(name, value)


def run_cli(world: World, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **world.env, "COLUMNS": "200"},  # wide: no wrapped lines
        cwd=ROOT,
        timeout=120,
    )


# -- what each case does ---------------------------------------------------------------------


def nothing(world: World) -> None:
    pass


def garbage_in(name: str) -> Callable[[World], None]:
    def arrange(world: World) -> None:
        for sidecar in ("-wal", "-shm", "-journal"):
            (world.home / f"{name}{sidecar}").unlink(missing_ok=True)
        (world.home / name).write_bytes(GARBAGE)

    return arrange


def repo_with(
    name: str, files: dict[str, str | bytes], links: dict[str, str] | None = None
) -> Callable[[World], None]:
    def arrange(world: World) -> None:
        repo = world.repo(name)
        for rel, content in files.items():
            repo.write(rel, content)
        for link, target in (links or {}).items():
            (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
            (repo.path / link).symlink_to(target)
        repo.commit(name)

    return arrange


def plain_dir_with_loops(world: World) -> None:
    root = world.tmp / "loops"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "walker.py").write_text("def loop_survivor_marker():\n    return 'ok'\n")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    (root / "self").symlink_to("self")
    (root / "pkg" / "up").symlink_to("..", target_is_directory=True)  # a directory cycle


@contextmanager
def opened(world: World) -> Iterator[Core]:
    core = world.core()
    try:
        yield core
    finally:
        core.close()


def raises(kind: type[BotError], says: str, call: Callable[[Core], object]) -> Check:
    def check(world: World) -> None:
        with opened(world) as core, pytest.raises(kind) as info:
            call(core)
        assert says in info.value.user_message
        assert "\n" not in info.value.user_message

    return check


def finds(query: str, repo: str, path: str) -> Check:
    def check(world: World) -> None:
        with opened(world) as core:
            hits = core.search(query, CLI, repos=frozenset({repo}), top_k=5)
        assert hits, f"{query!r} found nothing in {repo}"
        assert hits[0].chunk.path == path

    return check


def indexed_files(repo: str, count: int) -> Check:
    def check(world: World) -> None:
        with opened(world) as core:
            state = next(s for s in core.index.repo_states() if s.name == repo)
        assert state.files == count

    return check


def answers_nothing_from(repo: str) -> Check:
    """A repository with nothing indexable says so; it never borrows another's code."""

    def check(world: World) -> None:
        with opened(world) as core:
            answer = core.ask("where do we retry failed webhooks?", CLI, repos=frozenset({repo}))
        assert answer.mode == "empty"
        assert not answer.citations

    return check


def set_aside(name: str) -> Check:
    """The damaged file is kept (renamed), not deleted: it may hold something worth rescuing."""

    def check(world: World) -> None:
        kept = [p for p in world.home.rglob("*") if p.is_file() and p.read_bytes() == GARBAGE]
        assert kept, f"the damaged {name} was destroyed instead of set aside"
        assert all(p.name != name for p in kept), f"{name} is still the damaged file"

    return check


def cache_rebuilt(world: World) -> None:
    with EmbeddingCache(world.home / "embeddings.sqlite") as cache:
        assert len(cache) > 0  # working again, refilled by the question that met the damage


@dataclass(frozen=True)
class Case:
    id: str
    args: Callable[[World], Sequence[str]]  # the codecite command line
    exit: int  # expected exit status
    says: str  # in the one `error:` line (exit != 0) or in stdout (exit 0)
    arrange: Callable[[World], None] = nothing
    checks: tuple[Check, ...] = ()  # in-process, after the command
    repair: Callable[[World], None] | None = None  # the remedy the message asks for
    damaged: frozenset[str] = frozenset()  # Snapshot fields the case itself destroys
    llm: bool = False
    marks: tuple[pytest.MarkDecorator, ...] = ()


def ask(*words: str) -> Callable[[World], Sequence[str]]:
    return lambda world: ("ask", *words)


def index(location: str, *extra: str) -> Callable[[World], Sequence[str]]:
    def args(world: World) -> Sequence[str]:
        where = location.format(tmp=world.tmp)
        return ("index", where, *extra)

    return args


CASES = [
    Case(
        "empty-question",
        ask(""),
        2,
        "Please ask a question about the code",
        checks=(raises(QuestionError, "Please ask", lambda c: c.ask("", CLI)),),
    ),
    Case(
        "blank-question",
        ask(" \n\t "),
        2,
        "Please ask a question about the code",
        checks=(raises(QuestionError, "Please ask", lambda c: c.ask(" \n\t ", SLACK)),),
    ),
    Case(
        "40k-question",
        ask(HUGE_QUESTION),
        2,
        "That question is too long (40,000 characters; the limit is 12,000).",
        checks=(raises(QuestionError, "too long", lambda c: c.ask(HUGE_QUESTION, SLACK)),),
    ),
    Case(
        "query-syntax-and-control-characters",
        ask(') OR "retry_failed_webhooks" NEAR( * \x1b[31m \u202e'),
        0,
        "shop/webhooks.py:L",
        checks=(finds('retry\x00failed_webhooks) AND "', "shop", "shop/webhooks.py"),),
    ),
    Case(
        "unknown-repo",
        ask("where do we retry?", "--repo", "nope"),
        2,
        "The repository 'nope' is not indexed.",
        checks=(
            raises(
                NotIndexedError,
                "'nope' is not indexed",
                lambda c: c.ask("retry", CLI, repos=frozenset({"nope"})),
            ),
            raises(ScopeError, "'nope'", lambda c: c.run_command("reindex nope", CLI)),
        ),
    ),
    Case("reindex-unknown-repo", lambda w: ("reindex", "nope"), 2, "no repository named 'nope'"),
    Case(
        "not-a-url",
        index("not a url"),
        2,
        "does not exist and is not a git URL",
        checks=(raises(SourceError, "not a git URL", lambda c: c.index_repo("not a url")),),
    ),
    Case("ftp-url", index("ftp://x/y"), 2, "Unsupported URL scheme 'ftp'"),
    Case("space-in-host", index("https://exa mple.com/r"), 2, "contains whitespace"),
    Case("unreachable-host", index("https://127.0.0.1:9/repo.git"), 2, "Could not reach"),
    Case("missing-path", index("{tmp}/no/such/dir"), 2, "does not exist"),
    Case(
        "file-not-directory",
        lambda w: ("index", str(w.shop.path / "shop" / "billing.py")),
        2,
        "is not a directory",
    ),
    Case(
        "binary-file",
        index("{tmp}/bin", "--name", "bin"),
        0,
        "binary 1",
        arrange=repo_with(
            "bin",
            {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)) * 8, "a.py": "X = 1\n"},
        ),
        checks=(indexed_files("bin", 1),),
    ),
    Case(
        "huge-file",
        index("{tmp}/huge", "--name", "huge"),
        0,
        "too_large 1",
        arrange=repo_with(
            "huge",
            {
                "data/generated.py": "VALUE = 1\n" * 200_000,  # 2 MB
                "small.py": "def small_survivor_marker():\n    return 1\n",
            },
        ),
        checks=(
            indexed_files("huge", 1),
            finds("small_survivor_marker", "huge", "small.py"),
        ),
    ),
    Case(
        "symlink-loops-in-git",
        index("{tmp}/links", "--name", "links"),
        0,
        "symlink",
        arrange=repo_with(
            "links",
            {"real.py": "def link_survivor_marker():\n    return 2\n"},
            {"a": "b", "b": "a", "self": "self", "d/up": ".."},
        ),
        checks=(finds("link_survivor_marker", "links", "real.py"),),
    ),
    Case(
        "symlink-loops-in-directory",
        index("{tmp}/loops", "--name", "loops"),
        0,
        "symlink",
        arrange=plain_dir_with_loops,
        checks=(finds("loop_survivor_marker", "loops", "pkg/walker.py"),),
    ),
    Case(
        "non-utf8-file",
        index("{tmp}/latin", "--name", "latin"),
        0,
        "1 indexed",
        arrange=repo_with(
            "latin",
            {"legacy.py": LATIN_1_SOURCE},
        ),
        checks=(finds("latin_marker", "latin", "legacy.py"),),
    ),
    Case(
        "zero-indexable-files",
        index("{tmp}/blobs", "--name", "blobs"),
        0,
        "0 indexed",
        arrange=repo_with("blobs", {"a.bin": bytes(range(256)), "b.png": b"\x89PNG\x00\x00"}),
        checks=(indexed_files("blobs", 0), answers_nothing_from("blobs")),
    ),
    Case(  # set aside and rebuilt from the repositories it held, then answered (issue 27)
        "garbage-index",
        ask(QUESTIONS[0]),
        0,
        "shop/webhooks.py:L",
        arrange=garbage_in("index.sqlite"),
        checks=(
            set_aside("index.sqlite"),
            finds("retry failed webhooks", "shop", "shop/webhooks.py"),
        ),
    ),
    Case(
        "garbage-run-log",
        ask(QUESTIONS[0]),
        0,
        "shop/webhooks.py:L",
        arrange=garbage_in("runs.sqlite"),
        checks=(set_aside("runs.sqlite"),),
        damaged=frozenset({"last_run"}),
    ),
    Case(
        "garbage-feedback",
        ask(QUESTIONS[0]),
        0,
        "shop/webhooks.py:L",
        arrange=garbage_in("feedback.sqlite"),
        checks=(set_aside("feedback.sqlite"),),
        damaged=frozenset({"votes"}),
    ),
    Case(
        "garbage-embedding-cache",
        ask(QUESTIONS[0]),
        0,
        "shop/webhooks.py:L",
        arrange=garbage_in("embeddings.sqlite"),
        checks=(cache_rebuilt,),
        llm=True,
    ),
]


def assert_one_clear_line(result: subprocess.CompletedProcess[str], case: Case) -> None:
    everything = result.stdout + result.stderr
    assert "Traceback" not in everything
    assert result.returncode == case.exit, everything
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    # The terminal gets one-liners only: the error and, perhaps, warnings; never a dump.
    assert all(line.startswith(("error:", "warning:")) for line in lines), result.stderr
    errors = [line for line in lines if line.startswith("error:")]
    if case.exit:
        assert lines == errors == [errors[0]], result.stderr  # the error alone: one line
        assert case.says in errors[0]
    else:
        assert not errors, result.stderr
        assert case.says in result.stdout


def comparable(snap: Snapshot, damaged: frozenset[str]) -> Snapshot:
    return dataclasses.replace(snap, **dict.fromkeys(damaged))


@dataclass(frozen=True)
class Outcome:
    world: World
    before: Snapshot
    result: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Every case's command, run at once, each in its own copy of a baseline data directory.

    The commands are independent subprocesses; running them together keeps this file fast.
    """
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI() as fake:
        isolate(mp)
        root = tmp_path_factory.mktemp("bad-inputs")
        shop = GitRepo(root / "shop")
        build_shop(shop)
        bases = {
            False: World(root / "base", shop),
            True: World(root / "base-llm", shop, fake_url=fake.base_url),
        }
        befores = {llm: build_baseline(world) for llm, world in bases.items()}
        worlds: dict[str, World] = {}
        for case in CASES:
            base = bases[case.llm]
            world = dataclasses.replace(base, tmp=root / case.id)
            shutil.copytree(base.home, world.home)
            case.arrange(world)
            worlds[case.id] = world
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda c: run_cli(worlds[c.id], c.args(worlds[c.id])), CASES))
        yield {
            case.id: Outcome(worlds[case.id], befores[case.llm], result)
            for case, result in zip(CASES, results, strict=True)
        }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in CASES])
def test_bad_input_is_one_clear_line_and_loses_nothing(
    case: Case, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[case.id]
    assert_one_clear_line(outcome.result, case)
    for check in case.checks:
        check(outcome.world)
    if case.repair is not None:
        case.repair(outcome.world)
    after = snapshot(outcome.world)
    assert comparable(after, case.damaged) == comparable(outcome.before, case.damaged)
