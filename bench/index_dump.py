"""A digest of every table of a codecite data directory, to show two ingests wrote the same.

    .venv/bin/python bench/index_dump.py HOME_A HOME_B     # exit 1 and the tables that differ
    .venv/bin/python bench/index_dump.py HOME              # one line per table: rows, sha256

Every row of every table of `index.sqlite` and `index.symbols.sqlite` (FTS shadow tables
included) is hashed in primary-key order; only the moment of indexing (`repos.indexed_at`)
and the index's random id (`meta.segments_uid`, which names its segment files) are left out,
the values two ingests of one tree cannot share.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

DATABASES = ("index.sqlite", "index.symbols.sqlite")
VOLATILE = {("repos", "indexed_at")}  # columns left out
VOLATILE_KEYS = {"meta": ("key", "segments_uid")}  # rows left out: table -> (column, value)


def table_digests(home: Path) -> dict[str, tuple[int, str]]:
    """`db/table` -> (rows, sha256 of its rows in order)."""
    out: dict[str, tuple[int, str]] = {}
    for db in DATABASES:
        path = home / db
        if not path.exists():
            continue
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = [
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_schema WHERE type = 'table'"
                    " AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
                )
            ]
            for table in tables:
                out[f"{db}/{table}"] = _digest(conn, table)
        finally:
            conn.close()
    return out


def _digest(conn: sqlite3.Connection, table: str) -> tuple[int, str]:
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info('{table}')")]
    kept = [c for c in columns if (table, c) not in VOLATILE]
    order = ", ".join(f'"{c}"' for c in columns)
    sql = f'SELECT {", ".join(f"{chr(34)}{c}{chr(34)}" for c in kept)} FROM "{table}"'
    params: tuple[str, ...] = ()
    if table in VOLATILE_KEYS:
        column, value = VOLATILE_KEYS[table]
        sql += f' WHERE "{column}" IS NOT ?'
        params = (value,)
    digest = hashlib.sha256()
    rows = 0
    for row in conn.execute(f"{sql} ORDER BY {order}", params):
        digest.update(repr(row).encode("utf-8", "surrogatepass"))
        rows += 1
    return rows, digest.hexdigest()


def main(argv: Sequence[str]) -> int:
    homes = [Path(a) for a in argv]
    if len(homes) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    dumps = [table_digests(home) for home in homes]
    if len(dumps) == 1:
        for name, (rows, digest) in dumps[0].items():
            print(f"{name}\t{rows}\t{digest}")
        return 0
    a, b = dumps
    differ = sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))
    for name in sorted(a.keys() | b.keys()):
        mark = "DIFFERS" if name in differ else "same"
        print(f"{mark}\t{name}\t{a.get(name, (0, '-'))[0]} / {b.get(name, (0, '-'))[0]} rows")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
