"""Call attribution: "who calls X?" against `grep`, judged by an independent resolver.

    .venv/bin/python bench/symbol_calls.py --clones /work/.mirror --repo pallets/flask \\
        --repo psf/requests --repo pytest-dev/pytest --repo pylint-dev/pylint \\
        --names 20 --oracle-python /tmp/oracle/bin/python --json bench/results/symbol_calls.json

For each repository (its newest commit, copied with `git archive`), every Python
file goes through extraction into a symbol table (what ingest stores), and a
seeded sample of names is asked about: plain names defined in code ("who calls
`send`?", all their definitions are the targets) and qualified methods ("who calls
`Session.send`?"). The places compared are every line `grep -E '\\bNAME\\s*\\('` finds
(the definition lines left out) together with every call site the table holds by
name. Each place is labelled by jedi (`goto`, imports followed) run in a separate
venv with the repositories' dependencies installed (`--oracle-python`): a call of
a target, a call of something else, or unknown (jedi found nothing: a parameter, a
dynamic attribute). `before` is what the answer listed until now (every call site
with the name), `after` is what it lists now (sites not judged "no" by
`bot.retrieval.symbol_calls`). Precision and recall count labelled places only;
unknown places are counted apart, with how each side treated them. `--ask
REPO=NAME` adds chosen questions (`--names 0`: only those).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.trees import snapshot
from bot.retrieval.symbol_calls import CallJudge
from bot.retrieval.symbol_inherited import inherited
from bot.store.symbols.ranking import peripheral
from bot.store.symbols.table import SymbolStore
from bot.symbols.extract import extract_text
from bot.symbols.model import SymbolDef

REPO = "bench"
MAX_SITES = 80  # names called more often are left out of the sample (jedi's time)

# Runs in the oracle's venv: reads [{path, line, column}] and the repository root on stdin,
# prints [[path, line] of each definition jedi reaches] per query.
ORACLE = r"""
import json, sys, jedi
job = json.load(sys.stdin)
root = job["root"]
project = jedi.Project(root, added_sys_path=job["paths"])
out, scripts = [], {}
for q in job["queries"]:
    try:
        script = scripts.get(q["path"])
        if script is None:
            script = scripts[q["path"]] = jedi.Script(path=root + "/" + q["path"], project=project)
        names = script.goto(q["line"], q["column"], follow_imports=True)
        out.append([[str(n.module_path or ""), n.line or 0, n.name] for n in names])
    except Exception as exc:
        out.append([["!error", 0, str(exc)[:80]]])
print(json.dumps(out))
"""


Question = tuple[str, list[SymbolDef]]  # the name asked about, its targets


def build_table(tree: Path) -> tuple[SymbolStore, list[SymbolDef]]:
    """The table ingest would fill from the tree's Python files, and their definitions."""
    table = SymbolStore.in_memory()
    rows = []
    defs: list[SymbolDef] = []
    for path in sorted(tree.rglob("*.py")):
        rel = str(path.relative_to(tree))
        packed = extract_text(rel, path.read_text(encoding="utf-8", errors="replace"), "python")
        rows.append((rel, "k", packed))
        defs += [SymbolDef(REPO, rel, *row) for row in packed.defs]
    table.apply(REPO, rows)
    return table, defs


def sample_questions(
    table: SymbolStore, defs: list[SymbolDef], names: int, seed: int
) -> list[Question]:
    """Plain names and qualified methods defined in code, seeded."""
    code = [
        d
        for d in defs
        if d.kind in ("function", "method")
        and not peripheral(d.path)
        and len(d.name) >= 4
        and not d.name.startswith("__")
    ]
    rng = random.Random(seed)
    rng.shuffle(code)
    plain: list[Question] = []
    methods: list[Question] = []
    seen: set[str] = set()
    for d in code:
        calls = table.reference_count(d.name, repos=None, calls_only=True)
        if not 1 <= calls <= MAX_SITES or d.name in seen:
            continue
        seen.add(d.name)
        if d.kind == "method" and len(methods) < names // 2:
            methods.append((d.symbol, table.definitions(d.symbol, repos=None, limit=50)))
        elif d.kind == "function" and len(plain) < names - names // 2:
            plain.append((d.name, table.definitions(d.name, repos=None, limit=50)))
        if len(plain) + len(methods) >= names:
            break
    return plain + methods


def targets_of(table: SymbolStore, name: str) -> list[SymbolDef]:
    """What "who calls NAME?" is about: its definitions, else the one a class inherits."""
    return table.definitions(name, repos=None, limit=50) or inherited(table, name, None)[0]


def grep_places(tree: Path, name: str) -> dict[tuple[str, int], int]:
    """(path, line) -> column of `name(` for each textual call; definition lines left out."""
    found = subprocess.run(
        ["grep", "-rnE", "--include=*.py", rf"\b{re.escape(name)}\s*\(", "."],
        cwd=tree,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout
    out: dict[tuple[str, int], int] = {}
    call = re.compile(rf"(?<![\w]){re.escape(name)}\s*\(")
    for line in found.splitlines():
        path, number, text = line.split(":", 2)
        if re.search(rf"\b(def|class)\s+{re.escape(name)}\b", text):
            continue
        m = call.search(text)
        if m is not None:
            out[(path.removeprefix("./"), int(number))] = m.start()
    return out


def column_of(tree: Path, path: str, line: int, name: str) -> int:
    text = (tree / path).read_text(encoding="utf-8", errors="replace").split("\n")
    m = re.search(rf"(?<![\w]){re.escape(name)}\b", text[line - 1]) if line <= len(text) else None
    return m.start() if m else 0


def oracle(python: str, tree: Path, queries: list[dict[str, Any]]) -> list[list[list[Any]]]:
    paths = [str(tree / "src")] if (tree / "src").is_dir() else []
    job = json.dumps({"root": str(tree), "paths": paths, "queries": queries})
    done = subprocess.run(
        [python, "-c", ORACLE], input=job, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def label(found: list[list[Any]], targets: list[SymbolDef], tree: Path) -> str:
    """ "target", "other" or "unknown" for what jedi reached from one place."""
    reached = [(p, line) for p, line, _ in found if p and p != "!error"]
    if not reached:
        return "unknown"
    for p, line in reached:
        rel = str(Path(p).resolve().relative_to(tree.resolve())) if p.startswith(str(tree)) else ""
        if any(t.path == rel and t.start_line <= line <= t.end_line for t in targets):
            return "target"
    return "other"


def measure_repo(spec: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    _, tree = snapshot(spec, work, args.clones)
    table, defs = build_table(tree)
    asked = [n for r, _, n in (a.partition("=") for a in args.ask) if r == spec]
    questions = [(n, targets_of(table, n)) for n in asked]
    questions += sample_questions(table, defs, args.names, args.seed) if args.names else []
    totals: Counter[str] = Counter()
    rows = []
    for name, targets in questions:
        last = name.rpartition(".")[2]
        sites = table.references(last, repos=None, calls_only=True, limit=10_000)
        judged = {(a.site.path, a.site.line): a for a in CallJudge(table, targets).judge_all(sites)}
        kept = {place for place, a in judged.items() if a.verdict != "no"}
        before = {(s.path, s.line) for s in sites}
        places = grep_places(tree, last)
        for place in before - set(places):
            places[place] = column_of(tree, place[0], place[1], last)
        queries = [{"path": p, "line": n, "column": c} for (p, n), c in sorted(places.items())]
        labels = [label(f, targets, tree) for f in oracle(args.oracle_python, tree, queries)]
        counts: Counter[str] = Counter()
        for q, truth in zip(queries, labels, strict=True):
            place = (q["path"], q["line"])
            for side, listed in (("before", place in before), ("after", place in kept)):
                if truth == "unknown":
                    counts[f"{side}_unknown_{'listed' if listed else 'not_listed'}"] += 1
                elif listed:
                    counts[f"{side}_{'tp' if truth == 'target' else 'fp'}"] += 1
                elif truth == "target":
                    counts[f"{side}_fn"] += 1
            counts[f"oracle_{truth}"] += 1
            wrong = (truth == "target") != (place in kept) and truth != "unknown"
            if args.show and wrong:
                a = judged.get(place)
                how = f"{a.verdict}, {a.how} {a.instead}" if a else "not a call site in the table"
                at = f"{place[0]}:{place[1]}"
                print(f"    {name} {at} oracle={truth} after: {how}", file=sys.stderr)
        totals.update(counts)
        rows.append({"name": name, "targets": len(targets), "places": len(queries), **counts})
        print(f"  {spec} {name}: {dict(counts)}", file=sys.stderr, flush=True)
    table.close()
    return {"repo": spec, "questions": rows, "totals": dict(totals), **scores(totals)}


def scores(c: Counter[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for side in ("before", "after"):
        tp, fp, fn = c[f"{side}_tp"], c[f"{side}_fp"], c[f"{side}_fn"]
        out[f"{side}_precision"] = round(tp / (tp + fp), 3) if tp + fp else None
        out[f"{side}_recall"] = round(tp / (tp + fn), 3) if tp + fn else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--repo", action="append", required=True, help="owner/name under --clones")
    ap.add_argument("--clones", type=Path, required=True)
    ap.add_argument("--names", type=int, default=20, help="questions per repository")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument(
        "--ask", action="append", default=[], help="REPO=NAME: a question asked besides the sample"
    )
    ap.add_argument("--oracle-python", required=True, help="a python with jedi and the deps")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--show", action="store_true", help="print each place `after` gets wrong")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="symbol-calls-") as tmp:
        results = [measure_repo(spec, args, Path(tmp)) for spec in args.repo]
    totals: Counter[str] = Counter()
    for r in results:
        totals.update(r["totals"])
    summary = {"repos": results, "overall": {"totals": dict(totals), **scores(totals)}}
    for r in [*results, {"repo": "overall", **summary["overall"]}]:
        t = r["totals"]
        print(
            f"{r['repo']}: before P={r['before_precision']} R={r['before_recall']}  "
            f"after P={r['after_precision']} R={r['after_recall']}  "
            f"(oracle: {t.get('oracle_target', 0)} target, {t.get('oracle_other', 0)} other, "
            f"{t.get('oracle_unknown', 0)} unknown; unknown listed before/after: "
            f"{t.get('before_unknown_listed', 0)}/{t.get('after_unknown_listed', 0)})"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
