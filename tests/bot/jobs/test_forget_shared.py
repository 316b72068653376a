"""`forget` on the deployed shape: Pinecone (the strict fake) for the index, every other
record in real PostgreSQL, two processes with their own empty data directories.

Pinecone has no transactions: the repository is hidden from every search first, its
records deleted after. A removal cut off midway (Pinecone refusing a request) leaves a
repository nothing answers from, and running forget again deletes the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.config import Settings
from bot.core import CLI, Context, Core
from bot.errors import StoreError
from tests.servers.pinecone_fake import FakePinecone
from tests.support.gitrepo import GitRepo
from tests.support.jobs import shared_core, shared_services
from tests.support.shop import build_shop
from tests.support.snippets import LEDGER_PY

ADMIN = Context(platform="discord", user="UADMIN", channel="C1", is_admin=True)
QUESTION = "charge the customer or reconcile the ledger batch"
# every table of the shared database that keeps something per repository (but
# `sym_generations`: a counter that must only grow, so caches elsewhere never go stale)
TABLES = {
    "runs": "repo",
    "next_runs": "repo",
    "ingest_jobs": "repo",
    "sym_files": "repo",
    "sym_commits": "repo",
    "pc_repos": "name",
    "pc_files": "repo",
    "pc_chunks": "repo",
    "pc_df": "repo",
    "pc_pending": "repo",
    "pc_totals": "repo",
}


@dataclass
class Deployed:
    pinecone: FakePinecone
    database_url: str
    env: Any

    def core(self, name: str) -> Core:
        return shared_core(Settings(**self.env(name)))  # type: ignore[arg-type]

    def rows(self, repo: str) -> dict[str, int]:
        """How many rows each shared table holds for `repo` (only the non-empty ones)."""
        counts = {}
        with psycopg.connect(self.database_url) as conn:
            for table, column in TABLES.items():
                row = conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = %s", (repo,))
                counts[table] = int(row.fetchone()[0])  # type: ignore[index]
        return {table: n for table, n in counts.items() if n}

    def records(self, repo: str) -> dict[str, Any]:
        return {
            rid: (r.values, r.metadata)
            for rid, r in self.pinecone.records().items()
            if (r.metadata or {}).get("repo") == repo or rid.startswith(f"{repo}#")
        }


@pytest.fixture
def deployed(database_url: str, tmp_path: Path, make_repo: Any) -> Iterator[Deployed]:
    shop = make_repo("shop")
    build_shop(shop)
    billing: GitRepo = make_repo("billing")
    billing.write("billing/ledger.py", LEDGER_PY)
    billing.write("billing/charge.py", "def charge_customer(ledger):\n    return ledger.total\n")
    billing.commit("ledger")
    config = tmp_path / "codecite.toml"
    config.write_text('admins = ["UADMIN"]\n', encoding="utf-8")
    with shared_services(tmp_path, database_url, config) as services:
        world = Deployed(services.pinecone, database_url, services.env)
        scheduler = world.core("scheduler")
        scheduler.index_repo(f"file://{shop.bare_clone(tmp_path / 'shop.git')}", name="shop")
        scheduler.index_repo(str(billing.path), name="billing")
        scheduler.stores.jobs.enqueue("shop", "webhook")
        scheduler.close()
        yield world


def hits(core: Core) -> list[tuple[str, str, float]]:
    return [(h.chunk.repo, h.chunk.id, h.score) for h in core.search(QUESTION, CLI, top_k=20)]


def test_forget_removes_the_repository_from_pinecone_and_every_shared_table(
    deployed: Deployed,
) -> None:
    web, other = deployed.core("web"), deployed.core("discord")
    assert {repo for repo, _, _ in hits(other)} == {"shop", "billing"}
    assert set(deployed.rows("shop")) >= {"runs", "sym_files", "ingest_jobs", "pc_chunks"}
    billing_records = deployed.records("billing")
    billing_rows = deployed.rows("billing")
    scoped = frozenset({"billing"})
    billing_hits = [(h.chunk.id, h.score) for h in other.search(QUESTION, CLI, repos=scoped)]

    report = web.run_command("forget shop yes", ADMIN).final_text(timeout=60)
    assert report.startswith("Forgot shop: removed 3 files and ")
    assert report.endswith("1 queued re-index.")  # the clone was the scheduler's, elsewhere

    assert deployed.records("shop") == {}
    assert deployed.rows("shop") == {"ingest_jobs": 1}  # the job, failed with a sentence
    (text,) = [r for r in _job_texts(deployed.database_url, "shop")]
    assert text == "• shop: not re-indexed: it was forgotten before the run started."
    # the other process: nothing of shop, billing's answers as they were
    assert {repo for repo, _, _ in hits(other)} == {"billing"}
    assert [(h.chunk.id, h.score) for h in other.search(QUESTION, CLI, repos=scoped)] == (
        billing_hits
    )
    assert "shop" not in other.run_command("status", CLI).text
    assert deployed.records("billing") == billing_records
    assert deployed.rows("billing") == billing_rows


def test_a_removal_cut_off_in_pinecone_hides_the_repository_and_is_finished_later(
    deployed: Deployed,
) -> None:
    web, other = deployed.core("web"), deployed.core("discord")
    deployed.pinecone.fail_next(1, status=400, path="/vectors/list")  # after the hide
    with pytest.raises(StoreError) as stopped:
        web.run_command("forget shop yes", ADMIN).final_text(timeout=60)
    assert stopped.value.user_message == (
        "Forgetting shop stopped in the index (Pinecone refused the list request); "
        "run forget shop again to finish."
    )
    assert deployed.records("shop")  # its chunk records are still in Pinecone ...
    assert {repo for repo, _, _ in hits(other)} == {"billing"}  # ... and never returned
    assert "shop" not in other.run_command("repos", CLI).text

    asked = other.run_command("forget shop", ADMIN)
    assert asked.text.startswith("shop is not indexed, but traces of it are left (from a forget")
    done = other.run_command("forget shop yes", ADMIN).final_text(timeout=60)
    assert done.startswith("Finished forgetting shop: removed ")
    assert deployed.records("shop") == {} and set(deployed.rows("shop")) <= {"ingest_jobs"}


def _job_texts(url: str, repo: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT text FROM ingest_jobs WHERE repo = %s", (repo,)).fetchall()
    return [str(r[0]) for r in rows]
