"""'What changed in <area> since <tag>': only the commits touching the paths the area names."""

from __future__ import annotations

from bot.answer.history_summary import in_area
from bot.store.history_records import CommitRecord


def commit(seq: int, *paths: str) -> CommitRecord:
    return CommitRecord(
        seq, f"{seq:040x}", (), "Ann", "ann@example.com", seq, seq, f"change {seq}", "",
        paths=paths,
    )  # fmt: skip


COMMITS = [
    commit(1, "text_formatter.go", "text_formatter_test.go"),
    commit(2, "json_formatter.go"),
    commit(3, "zapcore/encoder.go", "zapcore/core.go"),
    commit(4, "README.md"),
    commit(5, "logrus.go", "entry.go"),
]


def seqs(found: list[CommitRecord]) -> list[int]:
    return [c.seq for c in found]


def test_a_file_named_by_its_words_keeps_the_commits_touching_it() -> None:
    found = in_area(COMMITS, "what changed in the text formatter since v1.8.1?", "logrus")
    assert seqs(found) == [1]


def test_a_directory_named_keeps_the_commits_under_it() -> None:
    assert seqs(in_area(COMMITS, "what changed in zapcore since v1.26.0?", "zap")) == [3]


def test_the_repository_itself_or_no_area_keeps_every_commit() -> None:
    assert seqs(in_area(COMMITS, "what changed in logrus since v1.9.0?", "sirupsen/logrus")) == [
        1, 2, 3, 4, 5,
    ]  # fmt: skip
    assert len(in_area(COMMITS, "what changed since last week?", "demo")) == 5
    assert len(in_area(COMMITS, "what changed in the code since 2.0?", "demo")) == 5


def test_words_no_path_holds_keep_every_commit() -> None:
    assert len(in_area(COMMITS, "what changed in the scheduler since v2?", "demo")) == 5
