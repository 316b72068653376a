"""The call-attribution benchmark's own parts, offline (its oracle, jedi, lives in another
venv): the places grep finds, how an oracle answer is labelled, and the scores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bench.symbol_calls import build_table, grep_places, label, sample_questions, scores
from bot.symbols.model import SymbolDef


def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "files.py").write_text(
        "def send_file(path):\n    return path\n\n\ndef serve(path):\n    return send_file(path)\n"
    )
    (tmp_path / "pkg" / "use.py").write_text(
        "import shutil\nfrom pkg.files import send_file\n\n\n"
        "def go(p):\n    send_file (p)\n    shutil.send_file(p)  # send_file( in a comment\n"
    )
    return tmp_path


def test_grep_finds_textual_calls_but_not_definitions(tmp_path):
    places = grep_places(tree(tmp_path), "send_file")
    assert places == {("pkg/files.py", 6): 11, ("pkg/use.py", 6): 4, ("pkg/use.py", 7): 11}


def test_oracle_answers_are_labelled_against_the_targets(tmp_path):
    root = tree(tmp_path)
    target = SymbolDef("bench", "pkg/files.py", "send_file", "send_file", "function", 1, 2)
    here = str(root / "pkg" / "files.py")
    assert label([[here, 1, "send_file"]], [target], root) == "target"
    assert label([["/usr/lib/python3/shutil.py", 9, "send_file"]], [target], root) == "other"
    assert label([], [target], root) == label([["!error", 0, "x"]], [target], root) == "unknown"


def test_the_table_and_sample_come_from_the_tree(tmp_path):
    table, defs = build_table(tree(tmp_path))
    assert {d.symbol for d in defs} == {"send_file", "serve", "go"}
    asked = sample_questions(table, defs, 2, seed=1)
    assert [name for name, _ in asked] == ["send_file"]  # the only function called
    table.close()


def test_scores_count_labelled_places_only():
    c = Counter({"before_tp": 3, "before_fp": 1, "after_tp": 3, "after_fn": 1})
    assert scores(c) == {
        "before_precision": 0.75,
        "before_recall": 1.0,
        "after_precision": 1.0,
        "after_recall": 0.75,
    }
