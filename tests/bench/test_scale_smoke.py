"""bench/scale.py end to end on two tiny trees: the table's shape, and counts that are real.

No timing is asserted: only that every figure was measured (a child ran and answered),
that counts agree with the index itself, and that scoped searches stay in scope.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bench import profile_summary, scale
from bench.common import run_child
from bench.scale_corpus import read_questions
from bench.scale_peer import export_chunks

SHOP = {
    "shop/stock.py": '''"""What the warehouse holds."""


class Warehouse:
    def __init__(self, shelves):
        self.shelves = dict(shelves)

    def reserve(self, sku, count):
        left = self.shelves.get(sku, 0) - count
        if left < 0:
            raise ValueError(f"only {self.shelves.get(sku, 0)} of {sku} left")
        self.shelves[sku] = left
''',
    "shop/payment.py": '''def charge_card(gateway, card, amount, attempts=3):
    """Charge a card, retrying a declined charge."""
    for _ in range(attempts):
        result = gateway.charge(card, amount)
        if result.ok:
            return result
    raise RuntimeError("charge failed")
''',
    "shop/session.py": '''def send_request(session, url):
    """Send a request and follow redirects."""
    response = session.get(url)
    while response.is_redirect:
        response = session.get(response.headers["location"])
    return response
''',
}
BLOG = {
    "blog/posts.py": '''def publish_post(post, when):
    """Publish a post at a given time."""
    post.published_at = when
    return post
''',
    "blog/feed.py": """def render_feed(posts):
    return "\\n".join(p.title for p in posts)
""",
}
SCALE_HEADER = ["repos", "added", "files", "chunks", "index MB", "ingest s", "first result s"]


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One quick run: shop, then blog, then both again under other names (a replica pass)."""
    tmp = tmp_path_factory.mktemp("scale")
    shop, blog = _tree(tmp / "shop-src", SHOP), _tree(tmp / "blog-src", BLOG)
    work, out = tmp / "work", tmp / "scale.json"
    argv = ["--quick", "--no-peer", "--tree", f"shop={shop}", "--tree", f"blog={blog}"]
    argv += ["--replicas", "1", "--work", str(work), "--json", str(out)]
    argv += ["--profile", str(tmp / "prof")]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert scale.main(argv) == 0
    return {
        "json": json.loads(out.read_text()),
        "stdout": printed.getvalue(),
        "work": work,
        "prof": tmp / "prof",
    }


def _first_table(text: str) -> list[list[str]]:
    """The cells of the first markdown table printed: header, then body (rule dropped)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| repos"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[start:end]]
    return [cells[0], *cells[2:]]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_rows_follow_each_addition_and_count_the_index(run: dict[str, Any]) -> None:
    rows = run["json"]["rows"]
    assert [r["label"] for r in rows] == ["1", "2", "4 (replicas)"]
    assert [r["added"] for r in rows] == [["shop"], ["blog"], ["shop-copy2", "blog-copy2"]]
    assert [r["repositories"] for r in rows] == [1, 2, 4]
    assert [r["files"] for r in rows] == [3, 5, 10]
    # each row's chunks are what its ingests reported, added up; a replica doubles them
    ingested = 0
    for row in rows:
        ingested += sum(a["chunks"] for a in row["ingest"])
        assert row["chunks"] == ingested
    assert rows[2]["chunks"] == 2 * rows[1]["chunks"] >= 2 * 5
    with sqlite3.connect(run["work"] / "home" / "index.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == rows[2]["chunks"]
        repos = {r for (r,) in conn.execute("SELECT name FROM repos")}
    assert repos == {"shop", "blog", "shop-copy2", "blog-copy2"}
    sizes = [r["index_bytes"] for r in rows]
    assert sizes == sorted(sizes) and sizes[0] > 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_figure_was_measured(run: dict[str, Any]) -> None:
    result = run["json"]
    questions = result["questions"]["all"]
    # --quick: up to five synthetic questions per tree, one per file that defines something
    # (shop 3, blog 2); no case files
    assert questions == 3 + 2
    assert result["scope"] == "shop"
    assert len(result["help"]["runs_s"]) == 1 and result["help"]["median_s"] > 0
    for row in result["rows"]:
        cold, ours = row["cold"], row["ours"]
        # imports are timed in another interpreter: under load they may outlast the search
        assert cold["imports_s"] > 0 and 0 < cold["first_result_s"] <= cold["exit_s"]
        assert cold["cpu_s"] > 0 and cold["imports_cpu_s"] > 0 and ours["build_cpu_s"] > 0
        assert cold["peak_rss_mb"] > 0 and cold["scoped_peak_rss_mb"] > 0
        assert ours["ok"] == 1 and ours["questions"] == questions
        assert ours["outside_scope"] == 0  # scoped searches answered only from shop
        assert ours["empty"] < questions  # the searches found things
        assert ours["serving_rss_mb"] > 0 and ours["build_s"] > 0
        assert row["status"]["median_s"] > 0 and len(row["load"]) == 2
        assert "bm25s" not in row  # --no-peer


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_table_has_the_issue_shape(run: dict[str, Any]) -> None:
    table = _first_table(run["stdout"])
    header, body = table[0], table[1:]
    assert header[: len(SCALE_HEADER)] == SCALE_HEADER
    assert "unscoped p50 / p95 ms" in header and "serving RSS MB" in header
    assert [r[0] for r in body] == ["1", "2", "4 (replicas)"]
    rows = run["json"]["rows"]
    assert [r[header.index("chunks")] for r in body] == [f"{r['chunks']:,}" for r in rows]
    assert run["stdout"].startswith("codecite --help: ")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_chunks_export_for_the_peer(run: dict[str, Any], tmp_path: Path) -> None:
    chunks = tmp_path / "chunks.jsonl"
    count = export_chunks(run["work"] / "home" / "index.sqlite", chunks)
    assert count == run["json"]["rows"][-1]["chunks"]
    docs = [json.loads(line) for line in chunks.read_text().splitlines()]
    assert len(docs) == count
    assert {d["repo"] for d in docs} == {"shop", "blog", "shop-copy2", "blog-copy2"}
    assert all(d["text"].startswith(("shop/", "blog/")) for d in docs)  # the path comes first
    assert any("def charge_card" in d["text"] for d in docs)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("tokens", ["bm25s", "code"])
def test_peer_searches_the_same_chunks(run: dict[str, Any], tmp_path: Path, tokens: str) -> None:
    python = scale.find_peer(scale.PEER_PYTHON)
    if python is None:
        pytest.skip("no python with bm25s: `make bench-venv` installs the bench extra")
    chunks = tmp_path / "chunks.jsonl"
    count = export_chunks(run["work"] / "home" / "index.sqlite", chunks)
    qfile = run["work"] / "questions.json"
    r = run_child(python, [str(scale.PEER), str(chunks), str(qfile), tokens, "shop"], timeout=300)
    assert r.out is not None, r.error
    assert r.out["documents"] == count
    assert len(r.out["times_ms"]) == len(r.out["scoped_times_ms"]) == len(read_questions(qfile))
    assert r.out["outside_scope"] == 0  # weight_mask kept scoped hits in shop
    assert r.out["empty"] < len(r.out["times_ms"])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_only_the_last_row_is_measured_when_asked(tmp_path: Path) -> None:
    shop, blog = _tree(tmp_path / "shop-src", SHOP), _tree(tmp_path / "blog-src", BLOG)
    argv = ["--quick", "--no-peer", "--rows", "last", "--tree", f"shop={shop}"]
    argv += ["--tree", f"blog={blog}", "--work", str(tmp_path / "work")]
    argv += ["--json", str(tmp_path / "scale.json")]
    with contextlib.redirect_stdout(io.StringIO()):
        assert scale.main(argv) == 0
    (row,) = json.loads((tmp_path / "scale.json").read_text())["rows"]
    assert row["label"] == "2" and row["files"] == 5
    assert [a["name"] for a in row["ingest"]] == ["shop", "blog"]  # both ingests, one row
    assert row["chunks"] == sum(a["chunks"] for a in row["ingest"])


def test_a_tree_that_cannot_be_found_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--no-peer", "--clones", str(tmp_path), "--tree", "acme/missing"]
    assert scale.main([*argv, "--work", str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: no clone of acme/missing under {tmp_path} (owner+name/repo or owner/name)"
    ]


def test_a_scope_that_is_no_tree_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shop = _tree(tmp_path / "shop", SHOP)
    argv = ["--quick", "--no-peer", "--tree", f"shop={shop}", "--scope", "billing"]
    assert scale.main([*argv, "--work", str(tmp_path / "work")]) == 2
    assert capsys.readouterr().err.startswith("error: --scope billing is none of the trees")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_last_real_row_and_last_row_are_profiled(run: dict[str, Any]) -> None:
    rows = run["json"]["rows"]
    wanted = {f"{rows[1]['chunks']}-chunks", f"{rows[2]['chunks']}-chunks"}
    assert {p.name for p in run["prof"].iterdir()} == wanted
    for name in wanted:
        for prof in ("cold-search.prof", "warm-search.prof"):
            inclusive, _, total = profile_summary.from_pstats(run["prof"] / name / prof)
            assert total > 0
            where = "adapters/cli/main.py" if prof.startswith("cold") else "bench/scale_child.py"
            assert any(where in key for key in inclusive)


def test_profile_summary_reads_collapsed_stacks(tmp_path: Path) -> None:
    spy = tmp_path / "cold.spy.txt"
    spy.write_text(
        "<module> (codecite:3);main (adapters/cli/main.py:280);build (bot/index/local/bm25.py:40) 6\n"
        "<module> (codecite:3);main (adapters/cli/main.py:281);search (bot/core.py:255) 3\n"
        "<module> (codecite:3) 1\n",
        encoding="utf-8",
    )
    inclusive, own, total = profile_summary.from_collapsed(spy)
    assert total == 10
    assert inclusive["main (adapters/cli/main.py)"] == 9  # lines differ; one function
    assert own["build (bot/index/local/bm25.py)"] == 6
    assert "60.0%  build (bot/index/local/bm25.py)" in profile_summary.summary(spy, 3)


def test_profile_summary_reads_cprofile(tmp_path: Path) -> None:
    prof = tmp_path / "warm.prof"
    profiler = cProfile.Profile()
    profiler.runcall(sorted, range(10_000), key=lambda n: -n)
    profiler.dump_stats(prof)
    inclusive, own, total = profile_summary.from_pstats(prof)
    assert total > 0 and max(inclusive.values()) <= total * 1.01
    assert any(key.startswith("<lambda> (") for key in own)
    assert profile_summary.main([str(tmp_path / "missing.prof")]) == 2
