"""The history store's contract, once per implementation (SQLite, PostgreSQL)."""

from __future__ import annotations

from bot.store import StoreSet
from bot.store.history_records import (
    CommitRecord,
    FileLines,
    HistoryHead,
    HistoryUpdate,
    LineState,
    PullRequest,
    TagRecord,
)


def _commit(seq: int, sha: str, **extra: object) -> CommitRecord:
    fields: dict[str, object] = dict(
        seq=seq, sha=sha, parents=(), author="Ann", email="a@x", authored=seq, committed=seq,
        subject=f"change {seq}", body="why it changed",
    )  # fmt: skip
    fields.update(extra)
    return CommitRecord(**fields)  # type: ignore[arg-type]


def _head(head: str, commits: int) -> HistoryHead:
    return HistoryHead("shop", head, "commits=10;days=0", 1, False, commits)


def test_an_update_is_read_back_whole(stores: StoreSet, other: StoreSet) -> None:
    lines = FileLines.of("a.py", [LineState((2, 1)), LineState((2, 1)), LineState((1,), gap=2)])
    update = HistoryUpdate(
        head=_head("b" * 40, 2),
        commits=[
            _commit(1, "a" * 40, tags=("v1",), refs=(7,)),
            _commit(2, "b" * 40, parents=("a" * 40,), prs=(12,), paths=("a.py",)),
        ],
        files=[lines],
        tags=[TagRecord("v1", "a" * 40, 1)],
        symbols={"b" * 40: ("a.py::f",)},
        replace=True,
    )
    stores.history.apply(update)
    seen = other.history  # another process's connections see the same
    assert seen.head("shop") == update.head
    commits = seen.commits("shop")
    assert [c.sha for c in commits] == ["a" * 40, "b" * 40]
    assert commits[1].pr == 12 and commits[1].symbols == ("a.py::f",)
    assert commits[0].tags == ("v1",) and commits[0].refs == (7,)
    assert seen.file_lines("shop", ["a.py", "gone.py"]) == {"a.py": lines}
    assert seen.tags("shop") == [TagRecord("v1", "a" * 40, 1)]
    assert seen.last_seq("shop") == 2 and seen.repos() == ["shop"]


def test_incremental_updates_keep_what_they_do_not_touch(stores: StoreSet) -> None:
    history = stores.history
    first = FileLines.of("a.py", [LineState((1,))])
    keep = FileLines.of("b.py", [LineState((1,))])
    history.apply(
        HistoryUpdate(_head("a" * 40, 1), [_commit(1, "a" * 40)], [first, keep], replace=True)
    )
    moved = FileLines.of("c.py", [LineState((2,))])
    history.apply(
        HistoryUpdate(_head("b" * 40, 2), [_commit(2, "b" * 40)], [moved], removed_paths=["a.py"])
    )
    assert set(history.file_lines("shop", ["a.py", "b.py", "c.py"])) == {"b.py", "c.py"}
    assert len(history.commits("shop")) == 2
    history.apply(HistoryUpdate(_head("c" * 40, 1), [_commit(1, "c" * 40)], [], replace=True))
    assert [c.sha for c in history.commits("shop")] == ["c" * 40]
    assert history.file_lines("shop", ["b.py"]) == {}


def test_pull_requests_are_cached_and_survive_a_rewrite_but_not_forgetting(
    stores: StoreSet,
) -> None:
    history = stores.history
    history.put_pull_requests(
        "shop", [PullRequest(12, "Add carts", "body", "https://x/12", "closed")]
    )
    history.apply(HistoryUpdate(_head("a" * 40, 0), replace=True))
    assert history.pull_requests("shop", [12, 13])[12].title == "Add carts"
    history.remove_repo("shop")
    assert history.head("shop") is None and history.pull_requests("shop", [12]) == {}


def test_line_states_round_trip_and_answer_ranges() -> None:
    states = [LineState((3, 1)), LineState((3,)), LineState((1,), gap=4), LineState()]
    lines = FileLines.of("a.py", states)
    assert FileLines.decode("a.py", lines.encode()) == lines
    assert lines.window(1, 5)[-1] == LineState()  # past the end: untouched
    assert lines.touching(2, 3, {}, {1: 10, 3: 30, 4: 40}) == [4, 3, 1]  # a gap inside counts
    assert lines.touching(3, 3, {}, {1: 10, 4: 40}) == [1]  # a gap at the first line does not
