"""`forget <repo>` through the Core: real git repositories (one cloned from a `file://`
remote, one local), the real SQLite index, symbol table, run log and job table.

Every trace of the forgotten repository goes (hits, symbol answers, status and repos
lines, runs, next run, queued jobs, clone) while the other repository answers exactly as
before; refusals come first and remove nothing; a forget stopped midway is finished by
running it again.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.config import ChannelConfig, FileConfig, RepoConfig, Settings
from bot.core import CLI, Context, Core
from bot.errors import NotIndexedError, PermissionDenied, QuestionError, ScopeError, StoreError
from bot.jobs.forget import StillConfigured
from bot.store.jobs import FAILED
from bot.store.locks import RepositoryBusy
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop
from tests.support.snippets import LEDGER_PY

ADMIN = Context(platform="slack", user="UADMIN", channel="C0OPEN", is_admin=True)
MEMBER = Context(platform="slack", user="UMEMBER", channel="C0OPEN")
CHARGE_PY = '''"""Charging for ledger batches."""


def charge_customer(ledger, customer):
    """Charge a customer the total of their ledger batch."""
    return ledger.post(customer, reconcile_ledger_batch(customer.batch))
'''
QUESTIONS = ("charge a customer", "reconcile the ledger batch", "failed webhooks with backoff")


@pytest.fixture
def repos(make_repo: Any, tmp_path: Path) -> tuple[GitRepo, GitRepo, Path]:
    shop = make_repo("shop")
    build_shop(shop)
    billing = make_repo("billing")
    billing.write("billing/ledger.py", LEDGER_PY)
    billing.write("billing/charge.py", CHARGE_PY)
    billing.commit("ledger")
    return shop, billing, shop.bare_clone(tmp_path / "remote" / "shop.git")


def make_core(repos: tuple[GitRepo, GitRepo, Path], config: FileConfig | None = None) -> Core:
    _, billing, remote = repos
    core = Core.from_settings(Settings(), config or FileConfig())
    core.index_repo(f"file://{remote}", name="shop")  # cloned into CODECITE_HOME/repos
    core.index_repo(str(billing.path), name="billing")
    return core


def billing_answers(core: Core) -> dict[str, Any]:
    """Everything billing answers with: hits (ids, lines, scores) and symbol rows."""
    scope = frozenset({"billing"})
    hits = {}
    for q in QUESTIONS:
        hits[q] = [(h.chunk.id, h.chunk.label, h.score) for h in core.search(q, CLI, repos=scope)]
    assert core.symbols is not None
    repo_map = core.run_command("map billing", CLI).answer
    assert repo_map is not None
    return {
        "hits": hits,
        "defs": core.symbols.definitions("charge_customer", repos=scope),
        "refs": core.symbols.references("reconcile_ledger_batch", repos=scope),
        "map": (repo_map.text, repo_map.citations),
    }


def confirm(core: Core, repo: str, ctx: Context = ADMIN) -> str:
    result = core.run_command(f"forget {repo} yes", ctx)
    assert result.later is not None and result.text == ""
    return result.later.result(timeout=60)


def test_forget_asks_first_then_removes_every_trace_and_nothing_else(repos: Any) -> None:
    core = make_core(repos)
    home = core.settings.home
    assert (home / "repos" / "shop").is_dir()
    core.note_next_run("shop", datetime.now(UTC) + timedelta(hours=1))
    queued = core.stores.jobs.enqueue("shop", "webhook")
    before = billing_answers(core)
    assert {h.chunk.repo for h in core.search("charge a customer", CLI)} == {"shop", "billing"}
    segment_files = sorted(home.glob("*.segments/*.seg"))  # one per repository
    assert len(segment_files) == 2

    asked = core.run_command("forget shop", ADMIN)
    assert asked.later is None and asked.ephemeral and asked.confirm == "forget shop yes"
    assert asked.text.startswith("Forget shop? This removes its 3 files and ")
    assert "its run history and its clone; answers stop citing it at once." in asked.text
    assert asked.text.endswith("To confirm: `forget shop yes`")
    assert [s.name for s in core.index.repo_states()] == ["billing", "shop"]  # nothing yet

    report = confirm(core, "shop")
    assert report.startswith("Forgot shop: removed 3 files and ")
    assert "from the run log, 1 queued re-index and its clone." in report

    # the forgotten repository: no hits, no symbols, no status or repos line, no runs, no clone
    assert {h.chunk.repo for h in core.search("charge a customer", CLI)} == {"billing"}
    assert all(h.chunk.repo == "billing" for q in QUESTIONS for h in core.search(q, CLI))
    answer = core.ask("where is WebhookSender defined?", CLI)
    assert all(c.repo == "billing" for c in answer.citations) and "shop/" not in answer.text
    assert core.symbols is not None and "shop" not in core.symbols.repos()
    assert core.symbols.definitions("WebhookSender", repos=None) == []
    assert "shop" not in core.run_command("status", CLI).text
    assert "shop" not in core.run_command("repos", CLI).text
    assert core.runs.last("shop") is None and core.runs.next_run("shop") is None
    assert core.stores.jobs.results([queued])[queued].state == FAILED
    assert not (home / "repos" / "shop").exists() and list((home / "repos").iterdir()) == []
    assert len(left := sorted(home.glob("*.segments/*.seg"))) == 1 and left[0] in segment_files
    with pytest.raises(ScopeError, match=r"^There is no repository named 'shop' here\.$"):
        core.run_command("forget shop", ADMIN)
    with pytest.raises(NotIndexedError, match=r"^The repository 'shop' is not indexed\.$"):
        core.run_command("map shop", CLI)
    # the other repository answers exactly as before (same hits, same scores, same symbols)
    assert billing_answers(core) == before
    assert core.symbols.definitions("charge_customer", repos=None) == before["defs"]
    assert core.runs.last("billing") is not None


def test_another_process_stops_answering_from_it_at_once(repos: Any) -> None:
    core = make_core(repos)
    other = Core.from_settings(Settings(), FileConfig())  # same data directory, own memory
    assert {h.chunk.repo for h in other.search("charge a customer", CLI)} == {"shop", "billing"}
    confirm(core, "shop")
    assert {h.chunk.repo for h in other.search("charge a customer", CLI)} == {"billing"}
    assert [s.name for s in other.index.repo_states()] == ["billing"]


def test_refusals_come_first_and_remove_nothing(repos: Any) -> None:
    config = FileConfig(
        repos=(RepoConfig(name="billing", path=str(repos[1].path)),),
        channels={"C0BILLING": ChannelConfig(repos=("billing",))},
    )
    core = make_core(repos, config)
    with pytest.raises(PermissionDenied):
        core.run_command("forget shop", MEMBER)
    with pytest.raises(PermissionDenied):
        core.run_command("forget shop yes", MEMBER)
    with pytest.raises(ScopeError, match=r"^There is no repository named 'nope' here\.$"):
        core.run_command("forget nope yes", ADMIN)
    in_billing = Context(platform="slack", user="UADMIN", channel="C0BILLING", is_admin=True)
    with pytest.raises(ScopeError, match="no repository named 'shop' here"):  # not its scope
        core.run_command("forget shop", in_billing)
    with pytest.raises(StillConfigured) as configured:
        core.run_command("forget billing yes", in_billing)
    assert configured.value.user_message == (
        "billing is listed in codecite.toml ([[repos]]), so the scheduler would index it "
        "again; remove it there instead, and the scheduler forgets it within a minute."
    )
    with pytest.raises(QuestionError, match="Name the repository to forget: `forget <repo>`"):
        core.run_command("forget", ADMIN)
    assert [s.name for s in core.index.repo_states()] == ["billing", "shop"]
    assert core.symbols is not None and core.symbols.repos() == ["billing", "shop"]


def test_a_repository_the_file_lists_now_is_refused_before_the_scheduler_reads_it(
    repos: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process's applied config may be older than the file (only the scheduler
    re-reads it): the file decides too, since the scheduler's next read would index it."""
    path = tmp_path / "codecite.toml"
    monkeypatch.setenv("CODECITE_CONFIG", str(path))
    core = make_core(repos)
    path.write_text(f'[[repos]]\nname = "shop"\nurl = "file://{repos[2]}"\n', encoding="utf-8")
    with pytest.raises(StillConfigured):
        core.run_command("forget shop", CLI)
    path.write_text("[[repos]\nbroken", encoding="utf-8")  # invalid: what is applied decides
    assert core.run_command("forget shop", CLI).confirm == "forget shop yes"


def test_a_forget_stopped_midway_hides_the_repository_and_finishes_when_run_again(
    repos: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = make_core(repos)
    runs = core.stores.runs

    def full_disk(repo: str) -> int:
        raise StoreError("The index could not be read or written.", detail="disk I/O error")

    monkeypatch.setattr(runs, "forget", full_disk)
    with pytest.raises(StoreError) as stopped:
        confirm(core, "shop")
    assert stopped.value.user_message == (
        "shop no longer answers, but forgetting it stopped before the end (The index could "
        "not be read or written); run forget shop again to finish."
    )
    # the index went first: nothing answers from shop, though its runs and clone remain
    assert {h.chunk.repo for h in core.search("charge a customer", CLI)} == {"billing"}
    assert "shop" not in core.run_command("repos", CLI).text
    assert runs.last("shop") is not None and (core.settings.home / "repos" / "shop").is_dir()

    monkeypatch.undo()
    asked = core.run_command("forget shop", ADMIN)  # the leftovers keep the name known
    assert asked.text.startswith("shop is not indexed, but traces of it are left (from a forget")
    assert confirm(core, "shop").startswith("Finished forgetting shop: removed 0 symbols")
    assert runs.last("shop") is None and not (core.settings.home / "repos" / "shop").exists()
    with pytest.raises(ScopeError):
        core.run_command("forget shop", ADMIN)


def test_a_clone_half_deleted_by_a_killed_forget_is_found_and_finished(repos: Any) -> None:
    core = make_core(repos)
    confirm(core, "shop")
    aside = core.settings.home / "repos" / ".shop.forgotten-0badc0de"
    (aside / "objects").mkdir(parents=True)  # what a kill during the delete leaves
    assert core.run_command("forget shop", ADMIN).confirm
    assert confirm(core, "shop") == (
        "Finished forgetting shop: removed 0 symbols from the symbol table, 0 runs from the "
        "run log and its clone."
    )
    assert not aside.exists()


def test_a_run_that_waited_for_the_lock_does_not_bring_it_back(repos: Any) -> None:
    """A job claimed before the forget (its target resolved) runs after it: refused."""
    core = make_core(repos)
    line = core._ingest
    targets = line.targets(["shop"])
    confirm(core, "shop")
    ((name, outcome),) = line.submit(targets, trigger="webhook").result(timeout=60)
    assert name == "shop" and isinstance(outcome, Exception)
    assert str(outcome) == "shop was forgotten before this run started; nothing was indexed."
    assert [s.name for s in core.index.repo_states()] == ["billing"]
    assert core.runs.last("shop") is None  # not even a failed run is logged


def test_forget_waits_for_an_ingest_of_the_repository(
    repos: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = make_core(repos)
    held, release = threading.Event(), threading.Event()

    def ingest() -> None:
        with core.stores.locks.hold("shop"):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=ingest)
    holder.start()
    assert held.wait(10)
    later = core.run_command("forget shop yes", ADMIN).later
    assert later is not None
    assert not later.done()  # waiting for the lock, nothing removed yet
    assert "shop" in {s.name for s in core.index.repo_states()}
    release.set()
    holder.join(10)
    assert later.result(timeout=60).startswith("Forgot shop:")


def test_a_busy_repository_is_a_one_line_refusal(
    repos: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = make_core(repos)
    monkeypatch.setattr("bot.jobs.forget.LOCK_WAIT", 0.0)
    with core.stores.locks.hold("shop"), pytest.raises(RepositoryBusy) as busy:
        confirm(core, "shop")
    assert str(busy.value) == (
        "That repository is being indexed right now; try again when it finishes."
    )
    assert "shop" in {s.name for s in core.index.repo_states()}


def test_a_repository_indexed_from_a_folder_inside_the_clones_folder_keeps_its_folder(
    tmp_path: Path,
) -> None:
    """Only clones codecite made are deleted: a local source is the operator's own files."""
    core = Core.from_settings(Settings(), FileConfig())
    own = GitRepo(core.settings.home / "repos" / "notes")
    own.write("notes/todo.py", "def remember():\n    return 'milk'\n")
    own.commit("notes")
    core.index_repo(str(own.path), name="notes")
    assert confirm(core, "notes").endswith("from the run log.")  # no "and its clone"
    assert (own.path / "notes" / "todo.py").is_file()
    assert core.index.repo_states() == []
