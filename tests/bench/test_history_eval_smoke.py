"""The history evaluation end to end on a small real repository, scored by hand.

The repository has a pull-request merge (#12) and its own commit, a branch commit that
says "Fixes #9" merged by another pull request (#13), a squash subject "(#15)", a commit
that inserts lines above a function (moving it), a rename, a tag and a changelog naming
the numbers. The builder derives every case's gold from it; the harness runs the gitgrep
peer over it; both are checked against what was worked out by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import history_cases, history_eval
from bench.history_codecite import NO_HISTORY, codecite_command, has_history
from tests.support.gitrepo import GitRepo, git

CART_V1 = """\
def add_item(items, sku, price):
    items.append((sku, price))


def total(items):
    return sum(price for _, price in items)
"""
CART_DISCOUNT = CART_V1.replace(
    "def total(items):\n    return sum(price for _, price in items)\n",
    "def total(items, discount=0):\n"
    "    gross = sum(price for _, price in items)\n"
    "    return gross * (100 - discount) / 100\n",
)
CART_QUANTITY = CART_DISCOUNT.replace(
    "def add_item(items, sku, price):\n    items.append((sku, price))\n",
    "def add_item(items, sku, price, quantity=1):\n    items.append((sku, price * quantity))\n",
)
CART_EMPTY = CART_QUANTITY.replace(
    "    gross = sum(", "    if not items:\n        return 0\n    gross = sum("
)
CART_ROUND = "def round_cents(value):\n    return round(value, 2)\n\n\n" + CART_EMPTY
CHANGES = """\
# Changes

## 1.1

- Prices are rounded to cents. #15
- Empty carts have a zero total. #9

## 1.0

- Totals apply a percentage discount. #12
"""


def _at(monkeypatch: pytest.MonkeyPatch, day: int) -> None:
    stamp = f"2024-01-{day:02d}T12:00:00+00:00"  # distinct days: "newest first" is decided
    monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
    monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)


def _merge(repo: GitRepo, branch: str, number: int, title: str) -> str:
    git(repo.path, "merge", "-q", "--no-ff", branch,
        "-m", f"Merge pull request #{number} from dev/{branch}", "-m", title)  # fmt: skip
    return repo.head()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    monkeypatch = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("clones")
    repo = GitRepo(root / "acme+shop" / "repo")
    sha: dict[str, str] = {}
    try:
        _at(monkeypatch, 1)
        repo.write("src/app/cart.py", CART_V1)
        sha["C1"] = repo.commit("Add cart totals")
        git(repo.path, "checkout", "-q", "-b", "discount")
        _at(monkeypatch, 2)
        repo.write("src/app/cart.py", CART_DISCOUNT)
        sha["D"] = repo.commit("Apply discounts to totals")
        git(repo.path, "checkout", "-q", "main")
        _at(monkeypatch, 3)
        sha["M12"] = _merge(repo, "discount", 12, "Apply discounts to totals")
        _at(monkeypatch, 4)
        repo.write("src/app/cart.py", CART_QUANTITY)
        sha["X"] = repo.commit("Let add_item take a quantity")
        git(repo.path, "tag", "v1.0")
        git(repo.path, "checkout", "-q", "-b", "empty")
        _at(monkeypatch, 5)
        repo.write("src/app/cart.py", CART_EMPTY)
        sha["F9"] = repo.commit("Return zero for an empty cart\n\nFixes #9")
        git(repo.path, "checkout", "-q", "main")
        _at(monkeypatch, 6)
        sha["M13"] = _merge(repo, "empty", 13, "Return zero for an empty cart")
        _at(monkeypatch, 7)
        repo.write("src/app/cart.py", CART_ROUND)
        sha["S15"] = repo.commit("Round prices to cents (#15)")
        _at(monkeypatch, 8)
        repo.move("src/app/cart.py", "src/shop/cart.py")
        sha["R"] = repo.commit("Move cart into the shop package")
        _at(monkeypatch, 9)
        repo.write("CHANGES.md", CHANGES)
        sha["Ch"] = repo.commit("Add a changelog")
    finally:
        monkeypatch.undo()
    return {"root": root, "sha": sha}


def _line(entry: str) -> int:
    return CHANGES.splitlines().index(f"- {entry}") + 1


def _cases(head: str) -> list[dict[str, object]]:
    base = {"repo": "acme/shop", "commit": head, "gold_commits": [], "gold_note": ""}
    rows: list[dict[str, object]] = [
        {"id": "when-1", "kind": "when", "question": "when did cart totals start taking a discount?",
         "changelog": {"path": "CHANGES.md", "line": _line("Totals apply a percentage discount. #12")}},
        {"id": "when-2", "kind": "when", "question": "when was the total of an empty cart fixed?",
         "changelog": {"path": "CHANGES.md", "line": _line("Empty carts have a zero total. #9")}},
        {"id": "why-1", "kind": "why", "question": "why do we round prices to two decimals?",
         "changelog": {"path": "CHANGES.md", "line": _line("Prices are rounded to cents. #15")}},
        {"id": "why-2", "kind": "why", "question": "why does the cart total handle nothing in it?",
         "changelog": {"path": "CHANGES.md", "line": _line("Empty carts have a zero total. #9")}},
        {"id": "who-1", "kind": "who", "question": "who last changed add_item?",
         "path": "src/shop/cart.py", "symbol": "add_item"},
        {"id": "who-2", "kind": "who", "question": "who last changed total in cart.py?",
         "path": "src/shop/cart.py", "symbol": "total"},
        {"id": "since-1", "kind": "since", "question": "what changed in the cart code since v1.0?",
         "tag": "v1.0", "area": "src"},
    ]  # fmt: skip
    return [{**base, **row} for row in rows]


@pytest.fixture(scope="module")
def built(shop: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> Path:
    sha = shop["sha"]
    assert isinstance(sha, dict)
    path = tmp_path_factory.mktemp("cases") / "history.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _cases(sha["Ch"])), encoding="utf-8")
    code = history_cases.main(
        ["derive", "--clones", str(shop["root"]), "--cases", str(path), "--write"]
    )
    assert code == 0
    return path


def _rows(path: Path) -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_builder_derives_the_gold_worked_out_by_hand(shop, built):
    sha, rows = shop["sha"], _rows(built)
    gold = {case_id: set(row["gold_commits"]) for case_id, row in rows.items()}
    assert gold["when-1"] == {sha["M12"], sha["D"]}  # the merge and the PR's own commit
    assert gold["when-2"] == gold["why-2"] == {sha["F9"], sha["M13"]}  # "Fixes #9" + its merge
    assert gold["why-1"] == {sha["S15"]}  # the squash subject
    assert rows["why-1"]["gold_roles"] == {sha["S15"]: "squash #15"}
    assert rows["when-1"]["gold_roles"] == {sha["M12"]: "merge #12", sha["D"]: "pr-commit #12"}
    # add_item last changed by X, then moved down by S15's insertion and renamed by R.
    assert rows["who-1"]["gold_commits"] == [sha["X"]]
    assert rows["who-1"]["moved"] is True and rows["who-1"]["renamed"] is True
    # total last changed on a branch (F9) before the rename: the gold is F9, not R.
    assert rows["who-2"]["gold_commits"] == [sha["F9"]]
    assert rows["who-2"]["renamed"] is True
    assert rows["who-2"]["lines"] == [9, 13]  # round_cents (4 lines) and add_item (4) above
    # After v1.0 under src/: F9, S15, R and the merge of #13; newest first.
    assert rows["since-1"]["gold_commits"] == [sha["R"], sha["S15"], sha["M13"], sha["F9"]]
    assert rows["when-1"]["changelog"]["version"] == "1.0"


def test_gitgrep_scores_match_the_hand_count(shop, built, tmp_path, capsys):
    out = tmp_path / "out.json"
    args = ["--clones", str(shop["root"]), "--cases", str(built), "--system", "gitgrep"]
    assert history_eval.main([*args, "--out", str(out), "--work", str(tmp_path / "w")]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    sha = shop["sha"]
    cited = {c["id"]: c["cited"]["gitgrep"] for c in result["cases"]}
    # "cart totals start taking discount": M12, D and C1 match two words, newest first.
    assert cited["when-1"][:3] == [sha["M12"], sha["D"], sha["C1"]]
    # "cart total handle nothing": C1 matches two words and leads; M13 is third.
    assert cited["why-2"][:3] == [sha["C1"], sha["R"], sha["M13"]]
    assert cited["who-2"] == [sha["M12"], sha["D"], sha["C1"]]  # only "total" matches
    assert cited["since-1"] == [sha["R"], sha["M13"], sha["F9"], sha["C1"]]
    scores = {c["id"]: c["scores"]["gitgrep"] for c in result["cases"]}
    hand = {  # (top1, top5)
        "when-1": (True, True),
        "when-2": (True, True),
        "why-1": (True, True),
        "why-2": (False, True),
        "who-1": (True, True),
        "who-2": (False, False),
        "since-1": (True, True),
    }
    assert {k: (s["top1"], s["top5"]) for k, s in scores.items()} == hand
    assert scores["who-1"]["exact"] is True and scores["who-2"]["exact"] is False
    assert scores["since-1"]["share"] == 0.75  # R, M13, F9 of R, M13, F9, C1
    summary = {(s["repo"], s["kinds"]): s for s in result["summary"] if s["system"] == "gitgrep"}
    one_repo = {k: v for k, v in summary[("acme/shop", "when+why")].items() if k != "repo"}
    assert one_repo == {k: v for k, v in summary[("ALL", "when+why")].items() if k != "repo"}
    assert (summary[("ALL", "why")]["top1"], summary[("ALL", "why")]["top5"]) == (0.5, 1.0)
    assert summary[("ALL", "who")]["exact"] == 0.5
    assert summary[("ALL", "ALL")]["top1"] == round(5 / 7, 3)
    assert summary[("ALL", "ALL")]["top5"] == round(6 / 7, 3)
    assert "| gitgrep |" in capsys.readouterr().out


def test_drifted_gold_stops_the_run(shop, built, tmp_path, capsys):
    rows = _rows(built)
    rows["who-1"]["gold_commits"] = [shop["sha"]["C1"]]
    drifted = tmp_path / "drifted.jsonl"
    drifted.write_text("".join(json.dumps(r) + "\n" for r in rows.values()), encoding="utf-8")
    clones = ["--clones", str(shop["root"]), "--cases", str(drifted)]
    assert history_cases.main(["check", *clones]) == 1
    assert history_eval.main([*clones, "--system", "gitgrep"]) == history_eval.EXIT_DRIFT
    assert "who-1: gold" in capsys.readouterr().err
    assert history_cases.main(["check", "--clones", str(shop["root"]), "--cases", str(built)]) == 0


def test_codecite_system_runs_or_says_in_one_line_why_not(shop, built, tmp_path, capsys):
    args = ["--clones", str(shop["root"]), "--cases", str(built), "--system", "codecite"]
    out = tmp_path / "out.json"
    code = history_eval.main([*args, "--out", str(out), "--work", str(tmp_path / "w")])
    err = capsys.readouterr().err
    if not has_history(codecite_command()):
        assert code == history_eval.EXIT_UNAVAILABLE
        assert f"codecite: {NO_HISTORY}\n" in err
        assert "Traceback" not in err
        return
    assert code == 0, err
    cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert len(cases) == 7
    assert all(set(c["scores"]) == {"codecite answer", "codecite search"} for c in cases)
