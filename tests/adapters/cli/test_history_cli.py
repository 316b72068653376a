"""History through the `codecite` command: index options, answers, `search --json`, `log`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.history_repo import build, git_last_change


def _indexed(make_repo, tmp_path: Path, *options: str):  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = build(repo)
    home = tmp_path / "home"
    result = run_cli(home, "index", str(repo.path), *options)
    assert result.returncode == 0, result.stderr
    return home, repo, shas


def test_who_last_changed_names_what_git_names(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home, repo, _ = _indexed(make_repo, tmp_path)
    text = (repo.path / "pkg/functions.py").read_text().splitlines()
    f5 = text.index("def f5(x):") + 1
    gold = git_last_change(repo.path, "pkg/functions.py", f5, f5 + 2)
    result = run_cli(home, "ask", "who last changed f5?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.index(gold[:8]) < result.stdout.index("Sources")
    sources = result.stdout.split("Sources", 1)[1]
    assert sources.split()[0] == gold[:8]  # the first cited commit


def test_search_json_lists_commit_hits_before_code_hits(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home, _, shas = _indexed(make_repo, tmp_path)
    result = run_cli(home, "search", "why was core renamed to functions?", "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    commits = [r for r in rows if r["kind"] == "commit"]
    assert commits and commits[0]["sha"] == shas["rename"]
    assert set(commits[0]) >= {"kind", "sha", "date", "author", "subject", "pr", "paths"}
    assert rows[: len(commits)] == commits and all(
        r["kind"] != "commit" and "path" in r for r in rows[len(commits) :]
    )
    merge = run_cli(home, "search", "which pull request merged the multiply change?", "--json")
    prs = [json.loads(line)["pr"] for line in merge.stdout.splitlines() if '"commit"' in line]
    assert 34 in prs


def test_log_follows_a_path_and_a_symbol(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home, _, shas = _indexed(make_repo, tmp_path)
    by_path = run_cli(home, "log", "demo", "pkg/functions.py")
    assert by_path.returncode == 0, by_path.stderr
    assert shas["delete"][:8] in by_path.stdout and shas["rename"][:8] in by_path.stdout
    by_symbol = run_cli(home, "log", "demo", "f1")
    assert by_symbol.returncode == 0, by_symbol.stderr
    assert by_symbol.stdout.splitlines()[1].split()[0] == shas["move"][:8]
    unknown = run_cli(home, "log", "demo", "no_such_thing")
    assert unknown.returncode != 0 and "Traceback" not in unknown.stderr


def test_index_options_set_the_horizon(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home, repo, shas = _indexed(make_repo, tmp_path, "--history-commits", "3")
    result = run_cli(home, "log", "demo")
    listed = [line.split()[0] for line in result.stdout.splitlines()[1:] if line.startswith("  ")]
    assert listed == [shas["delete"][:8], shas["move"][:8], shas["rename"][:8]]
    off = run_cli(home, "index", str(repo.path), "--no-history")
    assert off.returncode == 0, off.stderr
    assert run_cli(home, "log", "demo").returncode != 0
    bad = run_cli(home, "index", str(repo.path), "--history-days", "-1")
    assert bad.returncode != 0 and "must not be negative" in bad.stderr + bad.stdout
