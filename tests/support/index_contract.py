"""The Index contract: behaviour every index (LocalIndex, PineconeIndex, ...) must show.

Subclass `IndexContract` in a test module and provide an `index` fixture that
yields a fresh, empty index whose dense vectors have `DIM` dimensions:

    class TestMyIndexContract(IndexContract):
        DIM = 8

        @pytest.fixture
        def index(self, tmp_path): ...

Every chunk written by these tests carries a vector (some stores cannot hold a
record without one); tests that care about dense ranking pass their own. An
index that becomes consistent only eventually overrides `settle`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from bot.index.base import ChangeSet, Index
from bot.models import Chunk, FileDoc, FileEntry, RepoState, file_prefix

COMMIT_1 = "1" * 40
COMMIT_2 = "2" * 40
INDEXED_AT = datetime(2024, 5, 17, 12, 30, 15, 123456, tzinfo=UTC)


def make_chunk(
    repo: str,
    path: str,
    text: str,
    *,
    start: int = 1,
    end: int | None = None,
    symbol: str = "",
    header: str = "",
    kind: str = "function",
    language: str = "python",
    commit: str = COMMIT_1,
) -> Chunk:
    """A chunk whose end line follows from its text unless given."""
    last = end if end is not None else start + max(0, text.count("\n"))
    return Chunk(repo, path, language, start, last, kind, symbol, header, text, commit)


def pseudo_vector(key: str, dim: int) -> list[float]:
    """A deterministic unit vector derived from `key` (stable across runs and machines)."""
    raw = hashlib.sha256(key.encode()).digest()
    while len(raw) < dim * 4:
        raw += hashlib.sha256(raw).digest()
    values = [(b / 255.0) - 0.5 for b in raw[:dim]]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def unit(*values: float) -> list[float]:
    """Normalise `values` to a unit vector."""
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def pad(values: Sequence[float], dim: int) -> list[float]:
    """Zero-pad a short vector to `dim` dimensions."""
    return [*values, *([0.0] * (dim - len(values)))]


def file_docs(chunks: Iterable[Chunk], texts: Mapping[str, str] | None = None) -> list[FileDoc]:
    """One FileDoc per path, listing its chunks in line order; text defaults to the chunks'."""
    by_path: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_path.setdefault(chunk.path, []).append(chunk)
    docs = []
    for path, members in by_path.items():
        members.sort(key=lambda c: c.start_line)
        text = (texts or {}).get(path, "\n".join(c.text for c in members))
        blob = hashlib.sha1(text.encode()).hexdigest()
        docs.append(FileDoc(path, blob, members[0].language, text, tuple(c.id for c in members)))
    return docs


def repo_state(
    repo: str, *, commit: str = COMMIT_1, files: int = 0, chunks: int = 0, branch: str = "main"
) -> RepoState:
    return RepoState(
        name=repo,
        source=f"https://example.com/org/{repo}.git",
        branch=branch,
        commit=commit,
        indexed_at=INDEXED_AT,
        web_url=f"https://example.com/org/{repo}",
        files=files,
        chunks=chunks,
    )


def change_set(
    repo: str,
    chunks: Sequence[Chunk] = (),
    *,
    dim: int,
    vectors: Mapping[str, Sequence[float]] | None = None,
    deletes: Sequence[str] = (),
    removed_paths: Sequence[str] = (),
    files: Sequence[FileDoc] | None = None,
    texts: Mapping[str, str] | None = None,
    commit: str = COMMIT_1,
    totals: tuple[int, int] | None = None,
) -> ChangeSet:
    """A change set for `repo`: files derived from the chunks, a vector for every chunk.

    `vectors` overrides the pseudo-random vector of the chunks it names.
    `totals` is (files, chunks) for the recorded state; by default the counts
    of this change set (right for a first ingest).
    """
    docs = list(files) if files is not None else file_docs(chunks, texts)
    all_vectors = {c.id: pseudo_vector(c.id, dim) for c in chunks}
    all_vectors.update({k: list(v) for k, v in (vectors or {}).items()})
    n_files, n_chunks = totals if totals is not None else (len(docs), len(chunks))
    state = repo_state(repo, commit=commit, files=n_files, chunks=n_chunks)
    return ChangeSet(
        repo=repo,
        state=state,
        upserts=tuple(chunks),
        vectors=all_vectors,
        deletes=tuple(deletes),
        files=tuple(docs),
        removed_paths=tuple(removed_paths),
    )


# A small two-file repository used by many tests.
HOOKS_PY = "hooks/registry.py"
RETRY_PY = "net/retry_policy.py"


def sample_chunks(repo: str = "alpha") -> list[Chunk]:
    return [
        make_chunk(
            repo,
            HOOKS_PY,
            "def register_hook(name, callback):\n    HOOKS[name] = callback\n",
            start=1,
            symbol="register_hook",
            header="def register_hook(name, callback):",
        ),
        make_chunk(
            repo,
            HOOKS_PY,
            "def fire(name):\n    for cb in HOOKS.values():\n        cb(name)\n",
            start=4,
            symbol="fire",
            header="def fire(name):",
        ),
        make_chunk(
            repo,
            RETRY_PY,
            "class Backoff:\n    def delay(self, attempt):\n        return 2 ** attempt\n",
            start=10,
            symbol="Backoff.delay",
            header="class Backoff:",
            kind="method",
        ),
    ]


class IndexContract:
    """Contract tests; subclasses provide the `index` fixture (a fresh, empty index)."""

    DIM = 8

    def settle(self, index: Index) -> None:
        """Wait until writes are visible to reads; a no-op for consistent stores."""

    def apply(self, index: Index, change: ChangeSet) -> None:
        index.apply(change)
        self.settle(index)

    def seed(self, index: Index, repo: str = "alpha") -> list[Chunk]:
        chunks = sample_chunks(repo)
        self.apply(index, change_set(repo, chunks, dim=self.DIM))
        return chunks

    # -- lexical -------------------------------------------------------------

    def test_lexical_finds_chunk_by_body_token(self, index: Index) -> None:
        chunks = self.seed(index)
        hits = index.lexical(["callback"], repos=None, k=5)
        assert [h.chunk for h in hits] == [chunks[0]]
        assert hits[0].score > 0

    def test_lexical_returns_the_chunk_exactly_as_applied(self, index: Index) -> None:
        chunks = self.seed(index)
        hits = index.lexical(["backoff"], repos=None, k=5)
        assert hits[0].chunk == chunks[2]
        assert hits[0].chunk.id == chunks[2].id

    def test_lexical_finds_chunk_by_symbol_and_header_tokens(self, index: Index) -> None:
        self.seed(index)
        tick = make_chunk(
            "alpha",
            "sched.py",
            "    def tick(self):\n        self.n += 1\n",
            start=30,
            symbol="JobScheduler.tick",
            header="class CronQueue(Base):",
            kind="method",
        )
        self.apply(index, change_set("alpha", [*sample_chunks(), tick], dim=self.DIM))
        assert [h.chunk for h in index.lexical(["scheduler"], repos=None, k=5)] == [tick]
        assert [h.chunk for h in index.lexical(["jobscheduler"], repos=None, k=5)] == [tick]
        assert [h.chunk for h in index.lexical(["cron"], repos=None, k=5)] == [tick]

    def test_lexical_finds_chunks_by_path_token(self, index: Index) -> None:
        chunks = self.seed(index)
        hits = index.lexical(["registry"], repos=None, k=5)
        assert {h.chunk.id for h in hits} == {chunks[0].id, chunks[1].id}

    def test_lexical_any_term_may_match(self, index: Index) -> None:
        chunks = self.seed(index)
        hits = index.lexical(["callback", "attempt", "nonexistentterm"], repos=None, k=5)
        assert {h.chunk.id for h in hits} == {chunks[0].id, chunks[2].id}

    def test_lexical_ranks_denser_match_first(self, index: Index) -> None:
        strong = make_chunk(
            "alpha",
            "a/webhook.py",
            "def retry_webhook(webhook):\n    webhook.retry()\n    return webhook\n",
            symbol="retry_webhook",
        )
        weak = make_chunk(
            "alpha",
            "b/misc.py",
            "def unrelated(a, b):\n    # see webhook docs\n    x = a + b\n    y = x * 2\n"
            "    z = y - a\n    return [x, y, z, a, b]\n",
            symbol="unrelated",
        )
        self.apply(index, change_set("alpha", [weak, strong], dim=self.DIM))
        hits = index.lexical(["webhook"], repos=None, k=5)
        assert [h.chunk.id for h in hits] == [strong.id, weak.id]
        assert hits[0].score > hits[1].score

    def test_lexical_fields_restrict_columns(self, index: Index) -> None:
        in_symbol = make_chunk("alpha", "lib/x.py", "def parse(s):\n    return s\n", symbol="parse")
        in_body = make_chunk(
            "alpha", "runner/y.py", "def run(s):\n    return parse(s)\n", start=20, symbol="run"
        )
        self.apply(index, change_set("alpha", [in_symbol, in_body], dim=self.DIM))
        both = index.lexical(["parse"], repos=None, k=5)
        assert {h.chunk.id for h in both} == {in_symbol.id, in_body.id}
        only_symbol = index.lexical(["parse"], repos=None, k=5, fields=["symbol"])
        assert [h.chunk.id for h in only_symbol] == [in_symbol.id]
        only_path = index.lexical(["parse", "runner"], repos=None, k=5, fields=["path"])
        assert [h.chunk.id for h in only_path] == [in_body.id]
        assert index.lexical(["runner"], repos=None, k=5, fields=["body", "symbol"]) == []

    def test_lexical_respects_k(self, index: Index) -> None:
        chunks = [
            make_chunk("alpha", f"m{i}.py", f"def f{i}():\n    return token_{i} + shared\n")
            for i in range(12)
        ]
        self.apply(index, change_set("alpha", chunks, dim=self.DIM))
        assert len(index.lexical(["shared"], repos=None, k=5)) == 5
        assert len(index.lexical(["shared"], repos=None, k=50)) == 12

    def test_lexical_nothing_to_search_returns_empty(self, index: Index) -> None:
        self.seed(index)
        assert index.lexical([], repos=None, k=5) == []
        assert index.lexical(["", "  ", "!!!"], repos=None, k=5) == []
        assert index.lexical(["zzzunknownzzz"], repos=None, k=5) == []

    def test_lexical_on_empty_index(self, index: Index) -> None:
        assert index.lexical(["anything"], repos=None, k=5) == []
        assert index.files_lexical(["anything"], repos=None, k=5) == []

    # -- scope ---------------------------------------------------------------

    def _two_repos(self, index: Index) -> tuple[Chunk, list[Chunk]]:
        weak = make_chunk(
            "alpha",
            "src/notes.py",
            "def notes():\n    # mentions invoice once among many other words here\n"
            "    return summary_of_everything_else\n",
            symbol="notes",
        )
        strong = [
            make_chunk(
                "beta",
                f"invoice/invoice_{i}.py",
                f"def invoice_{i}(invoice):\n    return invoice.total(invoice)\n",
                symbol=f"invoice_{i}",
            )
            for i in range(15)
        ]
        self.apply(index, change_set("alpha", [weak], dim=self.DIM))
        self.apply(index, change_set("beta", strong, dim=self.DIM))
        return weak, strong

    def test_scope_filter_is_applied_before_the_limit(self, index: Index) -> None:
        weak, _ = self._two_repos(index)
        hits = index.lexical(["invoice"], repos=frozenset({"alpha"}), k=3)
        assert [h.chunk.id for h in hits] == [weak.id]
        files = index.files_lexical(["invoice"], repos=frozenset({"alpha"}), k=3)
        assert [(f.repo, f.path) for f in files] == [("alpha", weak.path)]

    def test_scope_none_means_every_repo(self, index: Index) -> None:
        weak, strong = self._two_repos(index)
        hits = index.lexical(["invoice"], repos=None, k=100)
        assert {h.chunk.id for h in hits} == {weak.id, *(c.id for c in strong)}
        both = index.lexical(["invoice"], repos=frozenset({"alpha", "beta"}), k=100)
        assert len(both) == 16

    def test_empty_scope_returns_nothing(self, index: Index) -> None:
        self._two_repos(index)
        nothing: frozenset[str] = frozenset()
        assert index.lexical(["invoice"], repos=nothing, k=5) == []
        assert index.files_lexical(["invoice"], repos=nothing, k=5) == []
        assert index.dense(pseudo_vector("q", self.DIM), repos=nothing, k=5) == []

    def test_unknown_repo_in_scope_returns_nothing(self, index: Index) -> None:
        self._two_repos(index)
        assert index.lexical(["invoice"], repos=frozenset({"gamma"}), k=5) == []

    # -- term statistics -------------------------------------------------------

    def test_term_stats_count_chunks_per_token_within_the_scope(self, index: Index) -> None:
        self._two_repos(index)  # alpha: 1 chunk naming "invoice"; beta: 15 chunks
        stats = index.term_stats(["invoice", "notes", "postgresql"], repos=frozenset({"beta"}))
        assert stats.chunks == 15
        assert dict(stats.df) == {"invoice": 15, "notes": 0, "postgresql": 0}
        alpha = index.term_stats(["invoice", "notes"], repos=frozenset({"alpha"}))
        assert (alpha.chunks, dict(alpha.df)) == (1, {"invoice": 1, "notes": 1})
        everything = index.term_stats(["invoice"], repos=None)
        assert (everything.chunks, everything.df["invoice"]) == (16, 16)

    def test_term_stats_see_symbol_header_and_path_tokens(self, index: Index) -> None:
        self.seed(index)
        stats = index.term_stats(
            ["register_hook", "registry", "backoff", "callback", "hooks"], repos=None
        )
        assert dict(stats.df) == {
            "register_hook": 1,
            "registry": 2,  # hooks/registry.py holds two chunks
            "backoff": 1,
            "callback": 1,
            "hooks": 2,
        }

    def test_term_stats_follow_removals_and_empty_scopes(self, index: Index) -> None:
        chunks = self.seed(index)
        self.apply(
            index,
            change_set(
                "alpha", chunks[:2], dim=self.DIM, deletes=[chunks[2].id], removed_paths=[RETRY_PY]
            ),
        )
        stats = index.term_stats(["backoff", "callback"], repos=frozenset({"alpha"}))
        assert (stats.chunks, dict(stats.df)) == (2, {"backoff": 0, "callback": 1})
        nothing = index.term_stats(["callback"], repos=frozenset())
        assert (nothing.chunks, dict(nothing.df)) == (0, {"callback": 0})
        unknown = index.term_stats(["callback"], repos=frozenset({"gamma"}))
        assert (unknown.chunks, dict(unknown.df)) == (0, {"callback": 0})

    # -- dense ---------------------------------------------------------------

    def test_dense_ranks_by_inner_product(self, index: Index) -> None:
        chunks = sample_chunks()
        vectors = {
            chunks[0].id: pad(unit(1.0, 0.0, 0.0), self.DIM),
            chunks[1].id: pad(unit(0.6, 0.8, 0.0), self.DIM),
            chunks[2].id: pad(unit(0.0, 0.0, 1.0), self.DIM),
        }
        self.apply(index, change_set("alpha", chunks, dim=self.DIM, vectors=vectors))
        hits = index.dense(pad(unit(1.0, 0.2, 0.0), self.DIM), repos=None, k=3)
        assert [h.chunk.id for h in hits] == [chunks[0].id, chunks[1].id, chunks[2].id]
        assert hits[0].score > hits[1].score > hits[2].score
        assert abs(hits[0].score - unit(1.0, 0.2, 0.0)[0]) < 1e-3
        assert hits[0].chunk == chunks[0]
        top = index.dense(pad(unit(0.0, 0.1, 1.0), self.DIM), repos=None, k=1)
        assert [h.chunk.id for h in top] == [chunks[2].id]

    def test_dense_scope(self, index: Index) -> None:
        a = make_chunk("alpha", "a.py", "def a():\n    pass\n")
        b = make_chunk("beta", "b.py", "def b():\n    pass\n")
        query = pad(unit(1.0, 0.0), self.DIM)
        off_axis = pad(unit(0.1, 1.0), self.DIM)
        self.apply(index, change_set("alpha", [a], dim=self.DIM, vectors={a.id: off_axis}))
        self.apply(index, change_set("beta", [b], dim=self.DIM, vectors={b.id: query}))
        hits = index.dense(query, repos=frozenset({"alpha"}), k=1)
        assert [h.chunk.id for h in hits] == [a.id]
        assert [h.chunk.id for h in index.dense(query, repos=None, k=1)] == [b.id]

    def test_dense_on_empty_index(self, index: Index) -> None:
        assert index.dense(pseudo_vector("q", self.DIM), repos=None, k=5) == []

    def test_dense_follows_updates(self, index: Index) -> None:
        chunks = self.seed(index)
        query = pseudo_vector(chunks[1].id, self.DIM)
        assert index.dense(query, repos=None, k=1)[0].chunk.id == chunks[1].id
        change = change_set(
            "alpha", [], dim=self.DIM, deletes=[chunks[1].id], files=file_docs([chunks[0]])
        )
        self.apply(index, change)
        ids = {h.chunk.id for h in index.dense(query, repos=None, k=5)}
        assert ids == {chunks[0].id, chunks[2].id}

    # -- change sets ---------------------------------------------------------

    def test_reapplying_a_change_set_is_idempotent(self, index: Index) -> None:
        chunks = sample_chunks()
        change = change_set("alpha", chunks, dim=self.DIM)
        self.apply(index, change)
        before = index.stats()
        self.apply(index, change)
        after = index.stats()
        assert (after.repos, after.files, after.chunks, after.vectors) == (
            before.repos,
            before.files,
            before.chunks,
            before.vectors,
        )
        hits = index.lexical(["callback"], repos=None, k=10)
        assert [h.chunk.id for h in hits] == [chunks[0].id]
        assert len(index.lexical(["registry"], repos=None, k=10)) == 2

    def test_delete_by_ids(self, index: Index) -> None:
        chunks = self.seed(index)
        change = change_set(
            "alpha", [], dim=self.DIM, deletes=[chunks[0].id], files=file_docs(chunks[1:])
        )
        self.apply(index, change)
        assert index.lexical(["callback"], repos=None, k=5) == []
        assert index.chunks_of("alpha", HOOKS_PY) == [chunks[1]]
        assert index.stats().chunks == 2

    def test_changed_file_replaces_its_chunks(self, index: Index) -> None:
        chunks = self.seed(index)
        new = make_chunk(
            "alpha",
            HOOKS_PY,
            "def register_hook(name, handler):\n    HOOKS[name] = handler\n",
            symbol="register_hook",
            commit=COMMIT_2,
        )
        change = change_set(
            "alpha",
            [new],
            dim=self.DIM,
            deletes=[chunks[0].id],
            files=file_docs([new, chunks[1]]),
            commit=COMMIT_2,
        )
        self.apply(index, change)
        assert index.lexical(["callback"], repos=None, k=5) == []
        assert [h.chunk for h in index.lexical(["handler"], repos=None, k=5)] == [new]
        assert index.chunks_of("alpha", HOOKS_PY) == [new, chunks[1]]
        entry = index.manifest("alpha")[HOOKS_PY]
        assert entry.chunk_ids == (new.id, chunks[1].id)

    def test_removed_path_drops_its_chunks_and_file(self, index: Index) -> None:
        chunks = self.seed(index)
        change = change_set(
            "alpha",
            [],
            dim=self.DIM,
            deletes=[c.id for c in chunks[:2]],
            removed_paths=[HOOKS_PY],
        )
        self.apply(index, change)
        assert index.lexical(["registry", "callback"], repos=None, k=5) == []
        assert index.files_lexical(["registry"], repos=None, k=5) == []
        assert index.chunks_of("alpha", HOOKS_PY) == []
        assert set(index.manifest("alpha")) == {RETRY_PY}
        assert index.ids_by_prefix(file_prefix("alpha", HOOKS_PY)) == []
        stats = index.stats()
        assert (stats.files, stats.chunks) == (1, 1)

    def test_state_is_recorded_and_replaced(self, index: Index) -> None:
        self.seed(index)
        first = change_set("alpha", sample_chunks(), dim=self.DIM).state
        assert index.repo_states() == [first]
        newer = repo_state("alpha", commit=COMMIT_2, files=2, chunks=3)
        self.apply(index, ChangeSet(repo="alpha", state=newer))
        assert index.repo_states() == [newer]

    # -- reading back --------------------------------------------------------

    def test_manifest_round_trip(self, index: Index) -> None:
        chunks = self.seed(index)
        docs = {d.path: d for d in file_docs(chunks)}
        manifest = index.manifest("alpha")
        assert manifest == {
            path: FileEntry(d.path, d.blob, d.language, d.chunk_ids) for path, d in docs.items()
        }
        assert index.manifest("nosuchrepo") == {}

    def test_repo_states_round_trip_sorted_by_name(self, index: Index) -> None:
        self.seed(index, "zeta")
        self.seed(index, "alpha")
        states = index.repo_states()
        assert [s.name for s in states] == ["alpha", "zeta"]
        expected = repo_state("zeta", files=2, chunks=3)
        assert states[1] == expected
        assert states[1].indexed_at == INDEXED_AT
        assert states[1].indexed_at.utcoffset() is not None

    def test_chunks_of_in_line_order(self, index: Index) -> None:
        chunks = sample_chunks()
        self.apply(index, change_set("alpha", list(reversed(chunks)), dim=self.DIM))
        assert index.chunks_of("alpha", HOOKS_PY) == chunks[:2]
        assert index.chunks_of("alpha", "missing.py") == []
        assert index.chunks_of("beta", HOOKS_PY) == []

    def test_ids_by_prefix(self, index: Index) -> None:
        chunks = self.seed(index)
        assert sorted(index.ids_by_prefix(file_prefix("alpha", HOOKS_PY))) == sorted(
            c.id for c in chunks[:2]
        )
        assert sorted(index.ids_by_prefix("alpha#")) == sorted(c.id for c in chunks)
        assert index.ids_by_prefix("beta#") == []

    def test_ids_by_prefix_treats_wildcards_literally(self, index: Index) -> None:
        odd = make_chunk("a_b", "x%y.py", "def f():\n    pass\n")
        other = make_chunk("axb", "xzy.py", "def g():\n    pass\n")
        self.apply(index, change_set("a_b", [odd], dim=self.DIM))
        self.apply(index, change_set("axb", [other], dim=self.DIM))
        assert index.ids_by_prefix("a_b#") == [odd.id]
        assert index.ids_by_prefix("a_b#x%") == [odd.id]
        assert index.ids_by_prefix("a%") == []

    def test_stats_counts(self, index: Index) -> None:
        assert (index.stats().repos, index.stats().chunks) == (0, 0)
        self.seed(index, "alpha")
        self.seed(index, "beta")
        stats = index.stats()
        assert (stats.repos, stats.files, stats.chunks, stats.vectors) == (2, 4, 6, 6)
        assert stats.bytes >= 0

    # -- file-level relevance --------------------------------------------------

    def test_files_lexical_ranks_matching_file_first(self, index: Index) -> None:
        chunks = self.seed(index)
        texts = {
            HOOKS_PY: "\n".join(c.text for c in chunks[:2]) + "\n# a hook registry of hooks\n",
            RETRY_PY: chunks[2].text,
        }
        self.apply(index, change_set("alpha", chunks, dim=self.DIM, texts=texts))
        hits = index.files_lexical(["hook"], repos=None, k=5)
        assert [(h.repo, h.path) for h in hits] == [("alpha", HOOKS_PY)]
        hits = index.files_lexical(["attempt", "callback"], repos=None, k=5)
        assert {h.path for h in hits} == {HOOKS_PY, RETRY_PY}
        by_path = index.files_lexical(["retry"], repos=None, k=5)
        assert [h.path for h in by_path] == [RETRY_PY]

    def test_files_lexical_prefers_the_file_about_the_terms(self, index: Index) -> None:
        about = make_chunk(
            "alpha",
            "billing/charge.py",
            "def charge(invoice):\n    amount = invoice.amount\n    return charge_card(amount)\n",
        )
        mention = make_chunk(
            "alpha",
            "util/strings.py",
            "def pad(s, n):\n    # used when printing an invoice header\n"
            "    return s.ljust(n) + trailing + more + words + here\n",
        )
        self.apply(index, change_set("alpha", [mention, about], dim=self.DIM))
        hits = index.files_lexical(["invoice", "amount"], repos=None, k=5)
        assert [h.path for h in hits] == ["billing/charge.py", "util/strings.py"]
        assert hits[0].score > hits[1].score
        assert len(index.files_lexical(["invoice"], repos=None, k=1)) == 1

    # -- removal -------------------------------------------------------------

    def test_remove_repo(self, index: Index) -> None:
        self.seed(index, "alpha")
        beta = self.seed(index, "beta")
        index.remove_repo("alpha")
        self.settle(index)
        assert [s.name for s in index.repo_states()] == ["beta"]
        assert index.manifest("alpha") == {}
        assert index.ids_by_prefix("alpha#") == []
        hits = index.lexical(["callback"], repos=None, k=5)
        assert [h.chunk for h in hits] == [beta[0]]
        dense = index.dense(pseudo_vector(beta[0].id, self.DIM), repos=None, k=10)
        assert {h.chunk.repo for h in dense} == {"beta"}
        stats = index.stats()
        assert (stats.repos, stats.files, stats.chunks, stats.vectors) == (1, 2, 3, 3)
        index.remove_repo("nosuchrepo")
