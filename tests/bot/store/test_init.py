"""`open_store` without a database URL is the embedded default: SQLite files, and psycopg
is never imported (the terminal and `make demo` need no driver)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.cli import ROOT

SCRIPT = """
import sys
from pathlib import Path
from bot.config import Settings
from bot.core import Core
from bot.wiring import make_stores
stores = make_stores(Settings())
stores.runs.last("api"); stores.claims.claim("k", ttl=5); stores.embedding_cache.put_many({"a": [1.0]})
with stores.locks.hold("api", wait=0):
    pass
stores.close()
core = Core.from_settings(Settings())
core.close()
loaded = sorted(m for m in sys.modules if m.startswith(("psycopg", "bot.store.postgres")))
print(loaded)
"""


def test_the_embedded_default_never_imports_psycopg(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "CODECITE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "runs.sqlite").exists() and (tmp_path / "events.sqlite").exists()
