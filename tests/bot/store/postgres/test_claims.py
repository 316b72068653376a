"""PostgreSQL specifics of event claims and the embedding cache: expired claims are swept
by the server's clock, and two writers evicting at once never deadlock."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import psycopg
import pytest

from bot.store.postgres import claims as pg_claims
from tests.support.stores import open_kind, use_database


def test_expired_claims_are_swept(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_claims, "SWEEP_EVERY", 3)
    home = tmp_path / "home"
    use_database(home, database_url)
    stores = open_kind("postgres", home)
    try:
        assert stores.claims.claim("old-1", "old-2", ttl=0.05)
        assert stores.claims.claim("kept", ttl=600)
        time.sleep(0.2)
        assert stores.claims.claim("new", ttl=600)  # the third claim sweeps first
        with psycopg.connect(database_url) as conn:
            keys = sorted(r[0] for r in conn.execute("SELECT key FROM claims"))
        assert keys == ["kept", "new"]
    finally:
        stores.close()


def test_two_writers_evicting_at_once_never_deadlock(
    database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    use_database(home, database_url)
    cap, batch = 100, 20
    sets = [open_kind("postgres", home, embedding_cache_max=cap) for _ in range(2)]
    start = threading.Barrier(len(sets))

    def write(n: int) -> None:
        start.wait()
        for b in range(30):
            sets[n].embedding_cache.put_many(
                {f"w{n}-{b}-{i}": [float(i)] * 4 for i in range(batch)}
            )

    try:
        with caplog.at_level(logging.WARNING):
            threads = [threading.Thread(target=write, args=(n,)) for n in range(len(sets))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert "embedding cache skipped" not in caplog.text  # no deadlock, no failed write
        # each writer evicts by what it sees: at most one batch over the cap, until the next
        assert cap <= len(sets[0].embedding_cache) <= cap + batch
        sets[0].embedding_cache.put_many({"last": [1.0]})
        assert len(sets[0].embedding_cache) == cap
    finally:
        for s in sets:
            s.close()
