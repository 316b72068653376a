"""Development figures for history answers (not the evaluation: h25e builds that one).

    .venv/bin/python bench/history_dev.py --clones /work/.mirror --repo psf/black \
        --repo python-attrs/attrs --per-repo 40 --out bench/results/history_dev.json

Questions come from each repository's own changelog: an entry that names a pull request
or issue number becomes "when was this changed: <entry>?" and "why was this changed:
<entry>?"; the gold is every recorded commit whose message names that number. "who last
changed <symbol>?" questions take definitions from the symbol table; their gold is
`git log -1 -L<start>,<end>:<path>` on the definition's current lines. Reported: the
gold among the answer's first cited commit (top 1) and first five (top 5), per kind,
beside the `git log --grep` peer (the question's words, any of them, newest first).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ENTRY = re.compile(r"^\s*[-*]\s+(.{20,200}?)\s*\(?\[?#(\d{2,5})\]?")
STOP = set("the a an of to in for and or is was were be by with on at as it this that".split())


def changelog_entries(repo: Path) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for name in ("CHANGES.md", "CHANGELOG.md", "CHANGES.rst", "CHANGELOG.rst"):
        text = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True, text=True
        ).stdout
        for line in text.splitlines():
            match = ENTRY.match(line)
            if match:
                entry = re.sub(r"[`*\[\]]", "", match.group(1)).strip(" .:(")
                found.append((entry, int(match.group(2))))
    return found


def grep_peer(repo: Path, question: str) -> list[str]:
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", question) if w.lower() not in STOP]
    args = ["git", "-C", str(repo), "log", "--format=%H", "-i", "-n", "5"]
    args += [f"--grep={re.escape(w)}" for w in words[:12]]
    return subprocess.run(args, capture_output=True, text=True).stdout.split()


def _ranks(prefix: str, ranked: list[str], gold: set[str]) -> dict[str, bool]:
    return {
        f"{prefix}top1": bool(ranked[:1] and ranked[0] in gold),
        f"{prefix}top5": bool(set(ranked[:5]) & gold),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clones", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--repo", action="append", required=True)
    parser.add_argument("--per-repo", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ["CODECITE_HOME"] = tempfile.mkdtemp(prefix="h25-eval-")
    from bot.config import FileConfig, Settings
    from bot.core import Core
    from bot.ingest.history import HistoryOptions
    from bot.models import Question

    core = Core.from_settings(Settings(), FileConfig())
    rows = []
    rng = random.Random(25)
    for slug in args.repo:
        source = args.clones / slug.replace("/", "+") / "repo"
        name = slug.split("/")[-1]
        core.index_repo(str(source), name=name, history=HistoryOptions(commits=0))
        commits = core.stores.history.commits(name)
        naming: dict[int, set[str]] = {}
        for c in commits:
            for n in (*c.prs, *c.refs):
                naming.setdefault(n, set()).add(c.sha)
        entries = [(e, n) for e, n in changelog_entries(source) if n in naming][: args.per_repo]
        cases = [(f"when was this changed: {e}?", "when", naming[n], e) for e, n in entries]
        cases += [(f"why was this changed: {e}?", "why", naming[n], e) for e, n in entries]
        defs = [
            d
            for p in core.symbols.paths(name)
            for d in core.symbols.file_facts(name, [p])[p].definitions
        ]
        defs = [d for d in defs if "." not in d.symbol and not d.path.startswith("tests")]
        # a name defined once: "who last changed X" then means one thing (namesakes in
        # stubs and typing examples would make the gold a coin toss)
        scope = frozenset({name})
        defs = [d for d in defs if len(core.symbols.definitions(d.symbol, repos=scope)) == 1]
        for d in rng.sample(defs, min(args.per_repo, len(defs))):
            gold = subprocess.run(
                ["git", "-C", str(source), "log", "-1", "--format=%H",
                 f"-L{d.start_line},{d.end_line}:{d.path}", "--no-patch"],
                capture_output=True, text=True,
            ).stdout.strip()  # fmt: skip
            cases.append((f"who last changed {d.symbol}?", "who", {gold}, d.symbol))
        for question, kind, gold, _ in cases:
            answer = core.answer(Question(question, frozenset({name})))
            cited = [c.sha for c in answer.citations if c.kind == "commit"]
            peer = grep_peer(source, question if kind != "who" else question.split()[-1])
            rows.append(
                {"repo": name, "kind": kind, "question": question}
                | _ranks("", cited, gold)
                | _ranks("peer_", peer, gold)
            )
    core.close()
    summary: dict[str, dict[str, float]] = {}
    for kind in ("when", "why", "who"):
        mine = [r for r in rows if r["kind"] == kind]
        if mine:
            summary[kind] = {
                "n": len(mine),
                **{k: round(sum(r[k] for r in mine) / len(mine), 3)
                   for k in ("top1", "top5", "peer_top1", "peer_top5")},
            }  # fmt: skip
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
