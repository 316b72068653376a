"""The evaluation harness end to end on a tiny repository with two cases, plus its scoring."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

from bench import eval_retrieval
from bench.bm25files import Bm25Files, is_test_path
from bench.cases import CaseError, find_clone, load_cases, plan
from bench.common import run_child
from bench.functions import FunctionMap
from bench.scoring import case_metrics, function_hit, function_matches
from tests.support.gitrepo import GitRepo, git

# shared/ sits beside the checkout (here and in CI)
SHARED_SCORE = Path(__file__).resolve().parents[3] / "shared" / "eval" / "score.py"

PAYMENT = '''"""Card payments."""


def charge_card(gateway, card, amount, attempts=3):
    """Charge a card, retrying a declined or failed charge a few times."""
    for _ in range(attempts):
        result = gateway.charge(card, amount)
        if result.ok:
            return result
    raise RuntimeError("charge failed")
'''

CART = '''"""Shopping cart."""


class Cart:
    def __init__(self):
        self.items = []

    def add_item(self, sku, price, quantity=1):
        self.items.append((sku, price, quantity))

    def total(self, discount=0):
        """Sum of line prices, minus a percentage discount."""
        gross = sum(price * quantity for _, price, quantity in self.items)
        return gross * (100 - discount) / 100
'''

# Written only in a commit that no case names: a harness that leaked later history would rank it.
LEAK = '''"""Retry a failed card charge: the fix that lands after the question was asked."""


def retry_failed_card_charge(card):
    return card
'''


def _case(cid: str, commit: str, question: str, gold: str, fn: str) -> dict[str, object]:
    return {
        "id": cid,
        "repo": "acme/shop",
        "commit": commit,
        "question": question,
        "gold_files": [gold],
        "gold_functions": [fn],
        "gold_files_exist_at_head": True,
        "reference_answer": "The answer is in shop/leak.py (never shown to a system).",
    }


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, Path]:
    """A bare clone at clones/acme+shop/repo and a case file naming its first two commits."""
    repo = GitRepo(tmp_path / "work" / "shop")
    repo.write("shop/payment.py", PAYMENT)
    repo.write("shop/cart.py", CART.replace(" minus a percentage discount", ""))
    repo.write("tests/test_cart.py", "def test_total():\n    assert Cart().total() == 0\n")
    repo.write("README.md", "# Shop\n\nA cart and card payments.\n")
    first = repo.commit("first")
    repo.write("shop/cart.py", CART)
    second = repo.commit("discounts")
    repo.write("shop/leak.py", LEAK)
    repo.commit("later history")
    repo.bare_clone(tmp_path / "clones" / "acme+shop" / "repo")
    cases = tmp_path / "cases.jsonl"
    rows = [
        _case(
            "shop-1",
            first,
            "Where do we retry a declined charge on the card?",
            "shop/payment.py",
            "shop/payment.py::charge_card",
        ),
        _case(
            "shop-2",
            second,
            "How is the cart total computed when a discount applies?",
            "shop/cart.py",
            "shop/cart.py::Cart.total",
        ),
    ]
    cases.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tmp_path / "clones", cases


def test_harness_scores_codecite_and_bm25files(shop: tuple[Path, Path], tmp_path: Path) -> None:
    clones, cases = shop
    out, preds = tmp_path / "out.json", tmp_path / "preds"
    code = eval_retrieval.main(
        [
            "--clones",
            str(clones),
            "--cases",
            str(cases),
            "--system",
            "codecite",
            "--system",
            "bm25files",
            "--work",
            str(tmp_path / "scratch"),
            "--out",
            str(out),
            "--preds",
            str(preds),
        ]
    )
    assert code == 0
    result = json.loads(out.read_text())
    runs = {r["system"]: r for r in result["runs"]}
    assert set(runs) == {"codecite", "bm25files"}
    ours = runs["codecite"]
    assert ours["n"] == 2
    assert ours["overall"]["hit@1"] == 1.0
    assert ours["overall"]["fn_hit@5"] == 1.0
    assert ours["by_repo"]["acme/shop"]["n"] == 2
    assert "fn_hit@5" not in runs["bm25files"]["overall"]  # no symbols, no function score
    rows = [r for r in result["cases"] if r["system"] == "codecite"]
    assert [r["id"] for r in rows] == ["shop-1", "shop-2"]  # oldest commit first
    for row in result["cases"]:
        assert "shop/leak.py" not in row["ranked_files"]  # the tree is the case's commit
        assert not any(f.startswith("shop/leak.py") for f in row["functions"])
    lines = (preds / "cases.per-commit.codecite.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["shop-1", "shop-2"]


def test_second_commit_is_indexed_incrementally(shop: tuple[Path, Path], tmp_path: Path) -> None:
    clones, case_file = shop
    cases = load_cases([case_file])
    steps = plan(cases, {"acme/shop": find_clone(clones, "acme/shop")}, "per-commit")
    from bench.systems import CodeciteSystem

    system = CodeciteSystem(tmp_path / "home")
    try:
        rows, ingests = eval_retrieval.run_steps(
            steps, [system], {"acme/shop": find_clone(clones, "acme/shop")}, tmp_path / "w", None
        )
    finally:
        system.close()
    first, second = ingests["codecite"]
    assert first["files_added"] == first["files"] >= 4
    assert (second["files_added"], second["files_changed"], second["files_removed"]) == (0, 1, 0)
    assert rows["codecite"][1]["ranked_files"][0] == "shop/cart.py"


def test_head_protocol_uses_newest_commit(shop: tuple[Path, Path]) -> None:
    clones, case_file = shop
    clone = find_clone(clones, "acme/shop")
    steps = plan(load_cases([case_file]), {"acme/shop": clone}, "head")
    head = git(clone, "rev-parse", "HEAD")
    assert [(s.commit, len(s.cases)) for s in steps] == [(head, 2)]


def test_find_clone_layouts(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "clones" / "acme" / "tool")
    repo.write("a.py", "x = 1\n")
    repo.commit()
    assert find_clone(tmp_path / "clones", "acme/tool") == tmp_path / "clones" / "acme" / "tool"
    with pytest.raises(CaseError, match="no clone of acme/other"):
        find_clone(tmp_path / "clones", "acme/other")


def test_bad_case_file_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "repo": "a/b"}\n')
    with pytest.raises(CaseError, match=r"bad\.jsonl:1"):
        load_cases([bad])


@pytest.mark.skipif(not SHARED_SCORE.exists(), reason="shared eval/score.py not on this machine")
def test_metrics_match_shared_score_py() -> None:
    spec = importlib.util.spec_from_file_location("shared_score", SHARED_SCORE)
    assert spec is not None and spec.loader is not None
    shared = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shared)
    rnd = random.Random(7)
    files = [f"f{i}.py" for i in range(30)]
    for _ in range(200):
        gold = rnd.sample(files, rnd.randint(1, 4))
        ranked = [rnd.choice(files) for _ in range(rnd.randint(0, 25))]
        assert case_metrics(ranked, gold) == shared.case_metrics(ranked, gold)


def test_metrics_by_hand() -> None:
    m = case_metrics(["b.py", "a.py", "b.py", "c.py"], ["a.py", "c.py"])
    assert (m["hit@1"], m["hit@3"], m["acc@3"], m["acc@1"]) == (0.0, 1.0, 1.0, 0.0)
    assert m["mrr"] == 0.5  # duplicates are ignored: a.py is second
    assert m["recall@1"] == 0.0 and m["recall@5"] == 1.0


def test_function_matching() -> None:
    assert function_matches("m.py::A.f", "m.py::A.f")
    assert function_matches("m.py::A.f.inner", "m.py::A.f")
    assert function_matches("m.py::A.obj", "m.py::A.obj_1")  # SWE-bench's duplicate suffix
    assert not function_matches("m.py::A.fx", "m.py::A.f")
    assert not function_matches("m.py::A", "m.py::A.f")
    ranked = ["m.py::a", "m.py::b", "m.py::a", "m.py::c", "m.py::d", "m.py::e", "m.py::g"]
    assert function_hit(ranked, ["m.py::e"]) == 1.0  # fifth distinct function
    assert function_hit(ranked, ["m.py::g"]) == 0.0


def test_bm25files_ranks_by_whole_file_and_skips_tests() -> None:
    docs = [
        ("pkg/retry.py", "def retry(): backoff backoff attempts"),
        ("pkg/cart.py", "def total(): price quantity"),
    ]
    index = Bm25Files(docs)
    assert [p for p, _ in index.rank("retry with backoff")] == ["pkg/retry.py"]
    assert index.rank("cart.py price")[0][0] == "pkg/cart.py"
    assert is_test_path("tests/test_x.py") and is_test_path("src/conftest.py")
    assert is_test_path("pkg/x_test.py") and not is_test_path("pkg/testutils.py")


def test_chunks_map_to_the_functions_they_show(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(CART)
    (tmp_path / "old.py").write_text("class A:\n    def f(self):\n        print 'py2'\n")
    functions = FunctionMap(tmp_path)
    # A whole-class chunk shows every method; a method chunk shows that method.
    assert functions.functions("m.py", 4, 14) == [
        "m.py::Cart.__init__",
        "m.py::Cart.add_item",
        "m.py::Cart.total",
    ]
    assert functions.functions("m.py", 11, 12) == ["m.py::Cart.total"]
    assert functions.functions("old.py", 1, 3) == ["old.py::A.f"]  # ast fails; indentation scan
    assert functions.functions("README.md", 1, 3, "Intro, Usage") == [
        "README.md::Intro",
        "README.md::Usage",
    ]


def test_run_child_reports_result_rss_and_timeout(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text("import json, sys\nprint('noise')\nprint(json.dumps({'n': 3}))\n")
    ok = run_child(Path(sys.executable), [str(script)])
    assert ok.out == {"n": 3} and ok.peak_rss > 1_000_000 and not ok.timed_out
    late = run_child(Path(sys.executable), ["-c", "import time; time.sleep(30)"], timeout=0.5)
    assert late.timed_out and late.out is None
    failed = run_child(Path(sys.executable), ["-c", "raise SystemExit('boom')"])
    assert failed.out is None and "boom" in failed.error
