"""Versioned migrations against a real server: once each, idempotent, safe from two
processes at once, a failed one leaves the schema at the last complete version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from bot.errors import StoreError
from bot.store import migrate_database, open_store
from bot.store.postgres import migrations
from bot.store.postgres.schema import MIGRATIONS
from tests.support.cli import ROOT

TABLES = {"runs", "next_runs", "answers", "votes", "claims", "vectors", "command_hashes"} | {
    "quota",
    "ingest_jobs",
    "pc_repos",
    "pc_files",
    "pc_chunks",
    "pc_df",
    "pc_pending",
}


def tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    return {str(r[0]) for r in rows}


def versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [int(r[0]) for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]


def test_a_fresh_database_is_migrated_once_and_a_second_run_does_nothing(
    database_url: str,
) -> None:
    applied, version = migrate_database(database_url)
    assert applied == sorted(MIGRATIONS) and version == migrations.LATEST
    assert TABLES | {"schema_version"} <= tables(database_url)
    again, version = migrate_database(database_url)
    assert again == [] and version == migrations.LATEST
    assert versions(database_url) == sorted(MIGRATIONS)


def test_opening_the_stores_migrates_a_fresh_database(database_url: str, tmp_path: Path) -> None:
    stores = open_store(tmp_path / "home", database_url=database_url)
    try:
        assert stores.runs.last("api") is None
    finally:
        stores.close()
    assert versions(database_url) == sorted(MIGRATIONS)


def test_two_processes_migrating_at_once_end_with_one_schema(database_url: str) -> None:
    """Both children are let go at one instant: the test holds the migration lock until
    both wait for it, then releases it."""
    script = "import json, sys\nfrom bot.store import migrate_database\n" + (
        "print(json.dumps(migrate_database(sys.argv[1])[0]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with psycopg.connect(database_url, autocommit=True) as gate:
        gate.execute(f"SELECT pg_advisory_lock({migrations.MIGRATION_LOCK})")
        children = [
            subprocess.Popen(
                [sys.executable, "-c", script, database_url],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            for _ in range(2)
        ]
        deadline = time.monotonic() + 30
        while waiting(gate) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waiting(gate) == 2  # both are migrating now, blocked on the lock
        gate.execute(f"SELECT pg_advisory_unlock({migrations.MIGRATION_LOCK})")
        outputs = [child.communicate(timeout=60) for child in children]
    assert [c.returncode for c in children] == [0, 0], [err for _, err in outputs]
    applied = [json.loads(out) for out, _ in outputs]
    assert sorted(applied[0] + applied[1]) == sorted(MIGRATIONS)  # each applied exactly once
    assert versions(database_url) == sorted(MIGRATIONS)
    assert tables(database_url) >= TABLES


def waiting(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    row = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    ).fetchone()
    return int(row[0]) if row else 0


def test_a_failing_migration_leaves_the_last_complete_version(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    migrate_database(database_url)
    bad = migrations.LATEST + 1
    monkeypatch.setitem(
        MIGRATIONS, bad, ("broken", ("CREATE TABLE half (x INTEGER)", "SELECT no_such_function()"))
    )
    with pytest.raises(StoreError):
        migrate_database(database_url)
    assert versions(database_url) == sorted(set(MIGRATIONS) - {bad})
    assert "half" not in tables(database_url)  # its own transaction: nothing of it stays
    monkeypatch.setitem(MIGRATIONS, bad, ("fixed", ("CREATE TABLE half (x INTEGER)",)))
    assert migrate_database(database_url)[0] == [bad]
    assert "half" in tables(database_url)


def test_symbol_rows_of_schema_6_upgrade_in_place(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 7 adds how sites were written and each file's links beside rows already
    there, migration 10 the names files bind without a definition; the rows keep answering
    by name until the next ingest re-reads the files."""
    for version in [v for v in MIGRATIONS if v > 6]:
        monkeypatch.delitem(MIGRATIONS, version)
    assert migrate_database(database_url)[1] == 6
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "INSERT INTO sym_files (repo, path, blob, names, offsets, sites, folded) "
            "VALUES ('api', 'a.py', 'k', ' send ', %s, %s, ARRAY['send'])",
            (b"\x00\x00\x00\x00\x01\x00\x00\x00", b"\x0b\x00\x00\x00"),  # line 5, a call
        )
    monkeypatch.undo()
    assert migrate_database(database_url)[0] == sorted(v for v in MIGRATIONS if v > 6)
    with psycopg.connect(database_url) as conn:
        for version in (7, 10):  # the symbol table's
            for statement in MIGRATIONS[version][1]:  # rerunnable
                conn.execute(statement.encode())
    stores = open_store(Path(os.environ.get("TMPDIR", "/tmp")), database_url=database_url)
    try:
        [site] = stores.symbols.references("send", repos=None)
        assert (site.path, site.line, site.call, site.form) == ("a.py", 5, True, 0)
        facts = stores.symbols.file_facts("api", ["a.py"])["a.py"]
        assert facts.links.imports == () and facts.aliases == ()
        assert stores.symbols.aliases("send", repos=None) == []
        stores.symbols.remove_repo("api")  # deletes through the new table too
        assert stores.symbols.references("send", repos=None) == []
    finally:
        stores.close()


def test_runs_of_schema_7_gain_what_they_left_out(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 8 counts what each run left out for secrets; runs logged before read 0."""
    for version in [v for v in MIGRATIONS if v > 7]:
        monkeypatch.delitem(MIGRATIONS, version)
    assert migrate_database(database_url)[1] == 7
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "INSERT INTO runs (repo, started_at, seconds, trigger, commit_sha, files_added, "
            "files_changed, files_removed, chunks_added, chunks_removed, embedded_inputs, "
            "embedding_tokens, error, embedding_tokens_saved, state) "
            "VALUES ('api', now(), 1, 'cli', 'abc', 0, 0, 0, 0, 0, 0, 0, '', 0, 'done')"
        )
    monkeypatch.undo()
    assert 8 in migrate_database(database_url)[0]
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT secret_files, key_blocks, redactions FROM runs").fetchone()
    assert row == (0, 0, 0)
