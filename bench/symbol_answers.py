"""Definition and caller answers on real repositories, scored against gold lines read from the code.

    .venv/bin/python bench/symbol_answers.py --clones /work/.mirror \\
        --cases bench/cases/symbols_dev.jsonl --json bench/results/symbol_answers.json

Each case names a repository and commit (materialised with `git archive`), a question
asked the way a new team member asks in chat, and its gold: for "where is X defined",
the line ranges of the definition (or of what makes the name: an alias, a loop);
for "who calls X", places that must be listed (`must`) and places that must not (`not`:
calls of a builtin, of the standard library, of another package's namesake). Every
repository is indexed into one data directory and each question is asked scoped to its
own, with no model (the exact answer is what people read first).

Scores, per kind of case ("shape": plain, alias, generated, receiver, untyped, ...):
- first: the answer's first citation overlaps a gold range (definitions);
- any: some citation overlaps one;
- unsure: the answer says it cannot tell and lists candidates;
- wrong: the answer states a definition (neither unsure nor "no definition") and its first
  citation is not gold: a confidently wrong answer;
- must: the share of `must` places cited; leaks: `not` places cited (callers).

Run it from two checkouts (PYTHONPATH=...) to compare before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import find_clone, materialise

UNSURE = ("I can't tell", "I can't be sure")
NOT_FOUND = ("I found no", "The indexed code has no", "The indexed code does not")


@dataclass
class Tally:
    cases: int = 0
    first: int = 0
    any: int = 0
    unsure: int = 0
    wrong: int = 0
    must: int = 0
    must_total: int = 0
    leaks: int = 0
    ids: list[str] = field(default_factory=list)


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def index_all(cases: Sequence[dict[str, Any]], clones: Path, work: Path) -> Any:
    from bot.config import FileConfig, Settings
    from bot.core import Core

    overrides: dict[str, object] = {"CODECITE_HOME": str(work / "home"), "CODECITE_INDEX": "local"}
    overrides.update(dict.fromkeys(("OPENAI_API_KEY", "OPENAI_BASE_URL", "PINECONE_API_KEY")))
    core = Core.from_settings(Settings(**overrides), FileConfig())  # type: ignore[arg-type]
    for repo, commit in sorted({(c["repo"], c["commit"]) for c in cases}):
        tree = materialise(find_clone(clones, repo), commit, work / "trees" / name_of(repo))
        core.index_repo(str(tree), name=name_of(repo))
    return core


def name_of(repo: str) -> str:
    return repo.split("/")[1]


def overlaps(cite: Any, gold: Sequence[Sequence[Any]]) -> bool:
    return any(
        cite.path == path and cite.start_line <= end and cite.end_line >= start
        for path, start, end in gold
    )


def score(case: dict[str, Any], answer: Any) -> dict[str, Any]:
    text = answer.text
    cites = list(answer.citations)
    out: dict[str, Any] = {"id": case["id"], "text": text.split("\n")[0][:300]}
    if case["kind"] == "definition":
        gold = case["gold"]
        first = bool(cites) and overlaps(cites[0], gold)
        unsure = text.startswith(UNSURE)
        stated = not unsure and not text.startswith(NOT_FOUND)
        out.update(
            first=first,
            any=any(overlaps(c, gold) for c in cites),
            unsure=unsure,
            wrong=stated and not first,
            cited=[c.label for c in cites[:4]],
        )
        return out
    sites = {(c.path, c.start_line) for c in cites if c.start_line == c.end_line}
    must = {(p, line) for p, line in case["must"]}
    forbidden = {(p, line) for p, line in case["not"]}
    out.update(must=len(must & sites), must_total=len(must), leaks=len(forbidden & sites))
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from bot.core import CLI

    cases = [c for path in args.cases for c in load(path)]
    work = Path(args.work or tempfile.mkdtemp(prefix="symbol-answers-"))
    core = index_all(cases, args.clones, work)
    results = []
    try:
        for case in cases:
            answer = core.ask(case["question"], CLI, repos=frozenset({name_of(case["repo"])}))
            results.append({**score(case, answer), "repo": case["repo"], "shape": case["shape"]})
    finally:
        core.close()
    return {"results": results, "summary": summarise(cases, results)}


def summarise(cases: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    for case, r in zip(cases, results, strict=True):
        for key in (f"{case['kind']}:{case['shape']}", f"{case['kind']}:all", "all"):
            t = tallies[key]
            t.cases += 1
            t.ids.append(case["id"])
            if case["kind"] == "definition":
                t.first += r["first"]
                t.any += r["any"]
                t.unsure += r["unsure"]
                t.wrong += r["wrong"]
            else:
                t.must += r["must"]
                t.must_total += r["must_total"]
                t.leaks += r["leaks"]
    return {k: {**vars(t), "ids": None} for k, t in sorted(tallies.items())}


def render(summary: dict[str, Any]) -> str:
    lines = [
        "| cases | n | first cited in gold | gold cited | unsure | wrong | must cited | leaks |"
    ]
    lines.append("|---|---|---|---|---|---|---|---|")
    for key, t in summary.items():
        lines.append(
            f"| {key} | {t['cases']} | {t['first']} | {t['any']} | {t['unsure']} | {t['wrong']} "
            f"| {t['must']}/{t['must_total']} | {t['leaks']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--clones", type=Path, required=True)
    ap.add_argument("--cases", type=Path, action="append", required=True)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    found = run(args)
    print(render(found["summary"]))
    for r in found["results"]:
        good = r["first"] if "first" in r else r["must"] == r["must_total"] and not r["leaks"]
        flag = "ok " if good else "-- "
        print(f"{flag}{r['id']}: {r['text'][:160]}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
