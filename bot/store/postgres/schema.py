"""The PostgreSQL schema, as numbered migrations (`bot.store.postgres.migrations` runs them).

    version: (name, statements)

Append a new version for every change; a shipped version is never edited.
"""

from __future__ import annotations

MIGRATIONS: dict[int, tuple[str, tuple[str, ...]]] = {
    1: (
        "run log, feedback, event claims, embedding cache, command hashes",
        (
            """CREATE TABLE runs (
                id BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL, started_at TIMESTAMPTZ NOT NULL,
                seconds DOUBLE PRECISION NOT NULL, trigger TEXT NOT NULL,
                commit_sha TEXT NOT NULL, files_added INTEGER NOT NULL,
                files_changed INTEGER NOT NULL, files_removed INTEGER NOT NULL,
                chunks_added INTEGER NOT NULL, chunks_removed INTEGER NOT NULL,
                embedded_inputs INTEGER NOT NULL, embedding_tokens BIGINT NOT NULL,
                error TEXT NOT NULL, embedding_tokens_saved BIGINT NOT NULL,
                state TEXT NOT NULL
            )""",
            "CREATE INDEX runs_repo ON runs (repo, id)",
            "CREATE TABLE next_runs (repo TEXT PRIMARY KEY, at TIMESTAMPTZ NOT NULL)",
            """CREATE TABLE answers (
                id TEXT PRIMARY KEY, platform TEXT NOT NULL, channel TEXT NOT NULL,
                asker TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL,
                citations JSONB NOT NULL, created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE votes (
                answer_id TEXT NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
                voter TEXT NOT NULL, vote SMALLINT NOT NULL CHECK (vote IN (-1, 1)),
                at TIMESTAMPTZ NOT NULL, PRIMARY KEY (answer_id, voter)
            )""",
            "CREATE INDEX votes_at ON votes (at)",
            """CREATE TABLE claims (
                key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL
            )""",
            "CREATE INDEX claims_expiry ON claims (expires_at)",
            """CREATE TABLE vectors (
                key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vec BYTEA NOT NULL,
                used_at TIMESTAMPTZ NOT NULL
            )""",
            "CREATE INDEX vectors_used ON vectors (used_at)",
            """CREATE TABLE command_hashes (
                name TEXT PRIMARY KEY, application TEXT NOT NULL, hashes JSONB NOT NULL
            )""",
        ),
    ),
    2: (
        "Pinecone's repository state: repositories, manifests, token dimensions, journal",
        (
            """CREATE TABLE pc_repos (
                name TEXT PRIMARY KEY, source TEXT NOT NULL, branch TEXT NOT NULL,
                commit_sha TEXT NOT NULL, indexed_at TIMESTAMPTZ NOT NULL, web_url TEXT NOT NULL,
                files INTEGER NOT NULL, chunks INTEGER NOT NULL
            )""",
            """CREATE TABLE pc_files (
                repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
                language TEXT NOT NULL, chunk_ids JSONB NOT NULL, terms BYTEA NOT NULL,
                PRIMARY KEY (repo, path)
            )""",
            """CREATE TABLE pc_chunks (
                id TEXT PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL,
                dense BOOLEAN NOT NULL, terms BYTEA NOT NULL
            )""",
            "CREATE INDEX pc_chunks_by_file ON pc_chunks (repo, path)",
            """CREATE TABLE pc_df (
                repo TEXT NOT NULL, level TEXT NOT NULL, term BIGINT NOT NULL,
                n BIGINT NOT NULL, PRIMARY KEY (repo, level, term)
            )""",
            """CREATE TABLE pc_pending (
                repo TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (repo, id)
            )""",
        ),
    ),
    3: (
        "the symbol table: files with packed references, definitions, generations, commits",
        (
            """CREATE TABLE sym_files (
                fid BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL,
                blob TEXT NOT NULL, names TEXT NOT NULL, offsets BYTEA NOT NULL,
                sites BYTEA NOT NULL, folded TEXT[] NOT NULL, UNIQUE (repo, path)
            )""",
            "CREATE INDEX sym_files_folded ON sym_files USING GIN (folded)",
            """CREATE TABLE sym_defs (
                fid BIGINT NOT NULL REFERENCES sym_files (fid) ON DELETE CASCADE,
                seq INTEGER NOT NULL, name TEXT NOT NULL, name_key TEXT NOT NULL,
                symbol TEXT NOT NULL, kind TEXT NOT NULL, start_line INTEGER NOT NULL,
                end_line INTEGER NOT NULL, PRIMARY KEY (fid, seq)
            )""",
            "CREATE INDEX sym_defs_by_name ON sym_defs (name_key)",
            """CREATE TABLE sym_generations (
                repo TEXT PRIMARY KEY, generation BIGINT NOT NULL
            )""",
            "CREATE TABLE sym_commits (repo TEXT PRIMARY KEY, commit_sha TEXT NOT NULL)",
        ),
    ),
    4: (
        "rate limits and the daily cap: recent question times per user and channel, counts per day",
        (
            """CREATE TABLE quota (
                kind TEXT NOT NULL, key TEXT NOT NULL,
                stamps DOUBLE PRECISION[] NOT NULL DEFAULT '{}',
                answered BIGINT NOT NULL DEFAULT 0, last_at DOUBLE PRECISION NOT NULL DEFAULT 0,
                PRIMARY KEY (kind, key)
            )""",
            "CREATE INDEX quota_idle ON quota (kind, last_at)",
        ),
    ),
    5: (
        "re-ingest jobs: queued by web processes, claimed by schedulers",
        (
            """CREATE TABLE ingest_jobs (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, repo TEXT NOT NULL,
                trigger TEXT NOT NULL, requested_by TEXT NOT NULL, quick BOOLEAN NOT NULL,
                state TEXT NOT NULL, owner TEXT NOT NULL DEFAULT '',
                attempts INTEGER NOT NULL DEFAULT 0,
                lease_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
                heartbeat_at TIMESTAMPTZ, created_at TIMESTAMPTZ NOT NULL,
                finished_at TIMESTAMPTZ, text TEXT NOT NULL DEFAULT ''
            )""",
            "CREATE UNIQUE INDEX ingest_jobs_one_queued ON ingest_jobs (repo) "
            "WHERE state = 'queued'",
            "CREATE INDEX ingest_jobs_by_state ON ingest_jobs (state, id)",
            "CREATE INDEX ingest_jobs_finished ON ingest_jobs (finished_at)",
        ),
    ),
    6: (
        "symbol definitions without a per-row foreign key check; Pinecone state totals, df by term",
        (
            # One RI trigger check per definition made an ingest twice SQLite's time;
            # `PostgresSymbols.apply`/`remove_repo` delete a file's definitions with it.
            "ALTER TABLE sym_defs DROP CONSTRAINT IF EXISTS sym_defs_fid_fkey",
            # Document frequencies over every repository (a query's IDF without a scope):
            # the primary key leads with the repository, so this was a scan of pc_df.
            "CREATE INDEX pc_df_by_term ON pc_df (level, term) INCLUDE (n)",
            # Documents per repository and level, kept by every write of the state: a
            # query's document count without a count(*) over pc_chunks/pc_files.
            """CREATE TABLE pc_totals (
                repo TEXT NOT NULL, level TEXT NOT NULL, docs BIGINT NOT NULL,
                PRIMARY KEY (repo, level)
            )""",
            "INSERT INTO pc_totals SELECT repo, 'chunk', count(*) FROM pc_chunks GROUP BY repo",
            "INSERT INTO pc_totals SELECT repo, 'file', count(*) FROM pc_files GROUP BY repo",
        ),
    ),
    7: (
        "symbol table: how each site was written, each file's imports, class bases, receivers",
        (
            # Rows written before keep answering (by name, without inheritance) until the
            # next ingest re-reads every file (SYMBOLS_VERSION); IF NOT EXISTS: rerunnable.
            "ALTER TABLE sym_files ADD COLUMN IF NOT EXISTS forms BYTEA NOT NULL DEFAULT ''",
            "ALTER TABLE sym_files ADD COLUMN IF NOT EXISTS links TEXT NOT NULL DEFAULT ''",
        ),
    ),
    8: (
        "run log: what each run left out of the index for holding secrets",
        tuple(
            f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {column} INTEGER NOT NULL DEFAULT 0"
            for column in ("secret_files", "key_blocks", "redactions")
        ),
    ),
    9: (
        "repository history: commits, line attribution at the recorded head, tags, PR titles",
        (
            """CREATE TABLE IF NOT EXISTS hist_heads (
                repo TEXT PRIMARY KEY, head TEXT NOT NULL, horizon TEXT NOT NULL,
                oldest BIGINT NOT NULL, complete INTEGER NOT NULL, commits INTEGER NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS hist_commits (
                repo TEXT NOT NULL, seq INTEGER NOT NULL, sha TEXT NOT NULL, parents TEXT NOT NULL,
                author TEXT NOT NULL, email TEXT NOT NULL, authored BIGINT NOT NULL,
                committed BIGINT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL,
                tags TEXT NOT NULL, prs TEXT NOT NULL, refs TEXT NOT NULL, paths TEXT NOT NULL,
                ranges TEXT NOT NULL, excerpt TEXT NOT NULL, symbols TEXT NOT NULL,
                PRIMARY KEY (repo, seq)
            )""",
            "CREATE UNIQUE INDEX IF NOT EXISTS hist_commits_sha ON hist_commits (repo, sha)",
            """CREATE TABLE IF NOT EXISTS hist_lines (
                repo TEXT NOT NULL, path TEXT NOT NULL, runs TEXT NOT NULL,
                PRIMARY KEY (repo, path)
            )""",
            """CREATE TABLE IF NOT EXISTS hist_tags (
                repo TEXT NOT NULL, name TEXT NOT NULL, sha TEXT NOT NULL,
                committed BIGINT NOT NULL,
                PRIMARY KEY (repo, name)
            )""",
            """CREATE TABLE IF NOT EXISTS hist_prs (
                repo TEXT NOT NULL, number INTEGER NOT NULL, title TEXT NOT NULL,
                body TEXT NOT NULL, url TEXT NOT NULL, state TEXT NOT NULL,
                PRIMARY KEY (repo, number)
            )""",
        ),
    ),
    10: (
        "symbol table: names bound without a definition (re-exports, aliases, run-time members)",
        (
            # Rows written before keep answering; their aliases come with the next ingest,
            # which re-reads every file (SYMBOLS_VERSION). Deleted with their file, like
            # sym_defs (no foreign key: `PostgresSymbols.apply`).
            """CREATE TABLE IF NOT EXISTS sym_aliases (
                fid BIGINT NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL,
                name_key TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
                module TEXT NOT NULL, owner TEXT NOT NULL,
                start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
                PRIMARY KEY (fid, seq)
            )""",
            "CREATE INDEX IF NOT EXISTS sym_aliases_by_name ON sym_aliases (name_key)",
        ),
    ),
}
