"""Development check of "who last changed X" (not the evaluation: bench/history_eval.py).

    .venv/bin/python bench/history_who_dev.py --clones /work/.mirror \\
        --repo pallets/jinja:src --repo sirupsen/logrus: --sample 30 \\
        --out /tmp/h25w-who-dev.json

Questions are drawn like `history_cases.py symbols` draws them (definitions defined once,
4-80 lines, outside tests, seeded); the gold is `git log -1 -L<start>,<end>:<path>` on the
definition's lines at the clone's HEAD. codecite indexes the clone with its whole history
(`history_codecite.py`) and answers in process. Every miss is classified:

  ingest   the commits recorded as changing the definition's lines lead with another
           commit than git's: the line attribution is wrong (`recorded` names it; `rank`:
           where the gold is among the recorded ones, -1 when absent)
  unrecognised  the attribution is right but the answer cites no commit (the question
           was not taken for a history question)
  chosen   the recorded attribution is right but the answer looked at other lines

with git's facts about the gold beside it: a merge, renamed or moved since.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.history_cases import sample_symbols
from bench.history_codecite import CodeciteHistory, index_name
from bench.history_git import last_change, open_clone, run_git

PHRASINGS = (
    "who last changed {name}?",
    "who made the most recent change to {name}, and when?",
    "who touched {name} last?",
    "who last modified `{name}`?",
    "who was the last person to edit {name} in {path}?",
    "when was {name} last changed, and by whom?",
)


def recorded(core: Any, name: str, path: str, start: int, end: int) -> list[str]:
    """The shas the store records as changing lines start..end of `path`, newest first."""
    from bot.retrieval.history_search import CommitSearch

    search = CommitSearch(core.stores.history)
    corpus = search.corpus(name)
    lines = search.lines(name, [path]).get(path)
    return [c.sha for c in corpus.touching(lines, start, end)] if corpus else []


def run_repo(system: CodeciteHistory, clones: Path, spec: str, size: int, seed: int) -> list[dict]:
    slug, _, under = spec.partition(":")
    git_dir = open_clone(clones, slug)
    commit = run_git(git_dir, "rev-parse", "HEAD^{commit}").strip()
    _, _, sample = sample_symbols(git_dir, commit, [under] if under else [], size, seed, 4)
    system.prepare(slug, git_dir, commit)
    core = system.core()
    name = index_name(slug, commit)
    rows = []
    for i, s in enumerate(sample):
        from bot.models import Question

        change = last_change(git_dir, commit, s.path, s.start, s.end)
        question = PHRASINGS[i % len(PHRASINGS)].format(name=s.name, path=s.path)
        answer = core.answer(Question(question, scope=frozenset({name})))
        cited = [c.sha for c in answer.citations if getattr(c, "kind", "code") == "commit"]
        mine = recorded(core, name, s.path, s.start, s.end)
        parents = run_git(git_dir, "show", "-s", "--format=%P", change.sha).split()
        row = {
            "repo": slug, "question": question, "path": s.path, "lines": [s.start, s.end],
            "gold": change.sha, "answer": cited[:1], "recorded": mine[:1],
            "rank": mine.index(change.sha) if change.sha in mine else -1,
            "merge": len(parents) > 1, "renamed": change.path_then != s.path,
            "moved": change.start_then != s.start,
        }  # fmt: skip
        row["miss"] = (
            None if cited[:1] == [change.sha]
            else "ingest" if mine[:1] != [change.sha]
            else "unrecognised" if not cited
            else "chosen"
        )  # fmt: skip
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clones", type=Path, required=True)
    ap.add_argument("--repo", action="append", required=True, help="owner/name:under")
    ap.add_argument("--sample", type=int, default=30, help="questions per repository")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    system = CodeciteHistory(Path(tempfile.mkdtemp(prefix="h25w-who-")))
    rows = []
    for spec in args.repo:
        rows += run_repo(system, args.clones, spec, args.sample, args.seed)
    system.close()
    summary: dict[str, Any] = {}
    for repo in sorted({r["repo"] for r in rows}):
        mine = [r for r in rows if r["repo"] == repo]
        exact = sum(r["miss"] is None for r in mine) / len(mine)
        misses = Counter(str(r["miss"]) for r in mine if r["miss"])
        summary[repo] = {"n": len(mine), "exact": round(exact, 3), "misses": dict(misses)}
    print(json.dumps(summary, indent=1))
    for r in rows:
        if r["miss"]:
            print(json.dumps(r))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
