"""Answers and prompts per question kind: what a person reads, and what the model is shown.

    .venv/bin/python bench/answers.py --clones /work/.mirror \\
        --cases bench/cases/answers_dev.jsonl --out bench/results/answers_dev.json

Question files are JSONL, one question a line: `{"id", "repo", "commit", "kind":
"definition"|"callers"|"how"|"architecture"|"unanswerable", "question", "gold": [{"path",
"start", "end"}], "notes"}`. Each repository is materialised at each commit its
questions name (`git archive`, from --clones) and indexed; each question is then asked
twice, scoped to its repository:

- with no model (the extractive answer, `Core.answer`): is the first cited range in
  gold, is any cited range in gold, does the answer say the code does not cover the
  question (for answerable kinds: a false not-found; for `unanswerable`: handled);
- with a model (the fake OpenAI server of tests/servers, no network): the prompt it
  received, with the gold lines' source number (1 = first), whether they are in the
  prompt at all (a source, or the facts block naming the gold file), and its size.

Aims (issue 26): gold in the prompt >= 95%, in source 1 or 2 >= 80%, median prompt
<= 12,000 characters.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import find_clone, materialise, repo_slug
from bench.notfound import NOT_FOUND
from bench.report import table
from bot.models import Answer, Question

KINDS = ("definition", "callers", "how", "architecture", "unanswerable")
_SOURCE = re.compile(r'<source-[0-9a-f]+ n="(\d+)" at="([^"]*)">')
_LABEL = re.compile(r"^(?P<repo>[^:]+): (?P<path>.+?):L(?P<start>\d+)(?:-L(?P<end>\d+))?")


@dataclass(frozen=True)
class Gold:
    path: str
    start: int
    end: int

    def overlaps(self, path: str, start: int, end: int) -> bool:
        return path == self.path and start <= self.end and self.start <= end


@dataclass(frozen=True)
class Item:
    id: str
    repo: str
    commit: str
    kind: str
    question: str
    gold: tuple[Gold, ...]


def load(paths: Sequence[Path]) -> list[Item]:
    items = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row["kind"] not in KINDS:
                raise SystemExit(f"{path}:{n}: unknown kind {row['kind']!r}")
            gold = tuple(Gold(g["path"], int(g["start"]), int(g["end"])) for g in row["gold"])
            items.append(
                Item(row["id"], row["repo"], row["commit"], row["kind"], row["question"], gold)
            )
    return items


def extractive_verdict(item: Item, answer: Answer) -> dict[str, Any]:
    cites = answer.citations
    first = bool(cites) and any(
        g.overlaps(cites[0].path, cites[0].start_line, cites[0].end_line) for g in item.gold
    )
    anywhere = any(g.overlaps(c.path, c.start_line, c.end_line) for c in cites for g in item.gold)
    flagged = answer.text.lstrip().startswith(NOT_FOUND)
    return {"first_in_gold": first, "any_in_gold": anywhere, "not_found": flagged}


def prompt_verdict(item: Item, body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages", [])
    text = "\n".join(str(m.get("content", "")) for m in messages)
    user = str(messages[-1].get("content", "")) if messages else ""
    rank = 0
    for n, at in _SOURCE.findall(user):
        m = _LABEL.match(at.replace("&quot;", '"').replace("&amp;", "&"))
        if m is None:
            continue
        start = int(m["start"])
        end = int(m["end"] or start)
        if any(g.overlaps(m["path"], start, end) for g in item.gold):
            rank = int(n)
            break
    facts = user.split("Facts from codecite", 1)[1] if "Facts from codecite" in user else ""
    named = any(f"{g.path}:L" in facts or f"`{g.path}`" in facts for g in item.gold)
    return {"source": rank, "in_prompt": bool(rank) or named, "chars": len(text)}


def run(items: Sequence[Item], clones: Path, work: Path) -> list[dict[str, Any]]:
    from bot.config import FileConfig, Settings
    from bot.core import Core
    from tests.servers.openai_fake import FakeOpenAI

    home = work / "home"
    base: dict[str, object] = {"CODECITE_HOME": str(home), "CODECITE_INDEX": "local"}
    plain = Core.from_settings(
        Settings(**base, OPENAI_API_KEY=None, OPENAI_BASE_URL=None),  # type: ignore[arg-type]
        FileConfig(),
    )
    rows = []
    with FakeOpenAI() as fake:
        model = Core.from_settings(
            Settings(  # type: ignore[arg-type]
                **base,
                OPENAI_API_KEY="bench",
                OPENAI_BASE_URL=fake.base_url,
                CODECITE_EMBED_MODEL="none",
            ),
            FileConfig(),
        )
        try:
            for (repo, commit), group in _by_tree(items).items():
                name = repo.rsplit("/", 1)[-1]  # as a team would name it ("how is chi organised?")
                tree = materialise(
                    find_clone(clones, repo), commit, work / "trees" / repo_slug(repo)
                )
                plain.index_repo(str(tree), name=name)
                for item in group:
                    question = Question(item.question, frozenset({name}))
                    row: dict[str, Any] = {"id": item.id, "kind": item.kind, "repo": repo}
                    row.update(extractive_verdict(item, plain.answer(question)))
                    before = len(fake.requests)
                    model.answer(question)
                    chats = [
                        r.body for r in fake.requests[before:] if r.path.endswith("/completions")
                    ]
                    row.update(prompt_verdict(item, chats[-1]) if chats else {"source": 0})
                    rows.append(row)
        finally:
            model.close()
            plain.close()
    return rows


def _by_tree(items: Sequence[Item]) -> dict[tuple[str, str], list[Item]]:
    out: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        out.setdefault((item.repo, item.commit), []).append(item)
    return out


def summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for kind in (*KINDS, "ALL"):
        group = [r for r in rows if kind in ("ALL", r["kind"])]
        if not group:
            continue
        answerable = [r for r in group if r["kind"] != "unanswerable"]
        unanswerable = [r for r in group if r["kind"] == "unanswerable"]
        prompted = [r for r in answerable if "chars" in r]
        out.append(
            {
                "kind": kind,
                "n": len(group),
                "first_in_gold": _share(answerable, "first_in_gold"),
                "any_in_gold": _share(answerable, "any_in_gold"),
                "false_not_found": sum(r["not_found"] for r in answerable),
                "not_found_handled": f"{sum(r['not_found'] for r in unanswerable)}"
                f"/{len(unanswerable)}",
                "gold_in_prompt": _share(prompted, "in_prompt"),
                "gold_in_source_1_2": _ratio(sum(0 < r["source"] <= 2 for r in prompted), prompted),
                "median_prompt_chars": int(
                    statistics.median(r["chars"] for r in group if "chars" in r)
                )
                if any("chars" in r for r in group)
                else 0,
            }
        )
    return out


def _share(rows: Sequence[dict[str, Any]], key: str) -> str:
    return _ratio(sum(bool(r.get(key)) for r in rows), rows)


def _ratio(k: int, rows: Sequence[object]) -> str:
    return f"{k}/{len(rows)}" if rows else "-"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--clones", type=Path, required=True)
    ap.add_argument("--cases", type=Path, action="append", required=True)
    ap.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    ap.add_argument("--out", type=Path, help="write every row and the summary here (JSON)")
    args = ap.parse_args(argv)
    items = load(args.cases)
    with tempfile.TemporaryDirectory(prefix="codecite-answers-") as tmp:
        rows = run(items, args.clones, args.work or Path(tmp))
    summed = summary(rows)
    header = list(summed[0]) if summed else ["kind"]
    print(table(header, [[row[h] for h in header] for row in summed]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summed, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
