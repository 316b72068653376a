"""Builds and checks the history evaluation's cases from the clones' own records.

    # candidates to write questions for (scratch files, not committed):
    .venv/bin/python bench/history_cases.py entries --clones /work/.mirror \\
        --repo pallets/werkzeug --changelog CHANGES.rst --out /tmp/werkzeug-entries.jsonl
    .venv/bin/python bench/history_cases.py symbols --clones /work/.mirror \\
        --repo pallets/werkzeug --under src --sample 60 --out /tmp/werkzeug-symbols.jsonl
    # (re)derive every case's gold from its inputs, in place:
    .venv/bin/python bench/history_cases.py derive --clones /work/.mirror \\
        --cases bench/cases/history_eval.jsonl --write
    # the cost-free gold check (exit 1 when a "who" gold drifted; --all: every kind):
    .venv/bin/python bench/history_cases.py check --clones /work/.mirror \\
        --cases bench/cases/history_eval.jsonl

The questions themselves (paraphrases of the changelog entries, the phrasing of the
"who" and "since" questions) are written by hand; everything else in a case is derived
here: the rules for what counts as gold are in bench/history_git.py.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import CaseError
from bench.history_casefile import load_history_cases, read_rows, write_rows
from bench.history_changelog import Entry, parse_changelog
from bench.history_git import History, last_change, open_clone, run_git, since_gold
from bench.history_symbols import LANGUAGES, Symbol, definitions

LEADING = ("id", "repo", "commit", "kind", "question", "gold_commits", "gold_note")
ROLE_ORDER = ("squash", "merge", "closes", "brought", "pr-commit")


class Clones:
    """Clones by repository, with each (repository, commit)'s history read once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._histories: dict[tuple[str, str], History] = {}

    def git_dir(self, repo: str) -> Path:
        return open_clone(self.root, repo)

    def history(self, repo: str, commit: str) -> History:
        key = (repo, commit)
        if key not in self._histories:
            self._histories[key] = History.read(self.git_dir(repo), repo, commit)
        return self._histories[key]


def ordered_gold(history: History, roles: dict[str, str]) -> list[str]:
    """Gold shas: those that name the number first (squash, merge, closes), newest first."""
    position = {sha: i for i, sha in enumerate(history.commits)}

    def key(sha: str) -> tuple[int, int]:
        return ROLE_ORDER.index(roles[sha].split()[0]), position.get(sha, 0)

    return sorted(roles, key=key)


def derive_row(row: dict[str, Any], clones: Clones) -> dict[str, Any]:
    """`row` with gold_commits, gold_note (and the fields they rest on) derived afresh."""
    derive = {"when": _changelog_gold, "why": _changelog_gold, "who": _who_gold}
    out = derive.get(row["kind"], _since_gold)(row, clones)
    return {k: out[k] for k in (*LEADING, *sorted(set(out) - set(LEADING))) if k in out}


def _changelog_gold(row: dict[str, Any], clones: Clones) -> dict[str, Any]:
    entry = changelog_entry(clones.git_dir(row["repo"]), row["commit"], row["changelog"])
    check_paraphrase(row["id"], row["question"], entry)
    # `use_numbers` narrows an entry whose text names a number it does not fix (a typo'd
    # link, the PR that introduced the regression being fixed); set by hand, kept.
    numbers = [int(n) for n in row.get("use_numbers") or entry.numbers]
    history = clones.history(row["repo"], row["commit"])
    roles = history.gold_for(numbers)
    gold = ordered_gold(history, roles)
    named = "; ".join(f"{sha[:10]} {roles[sha]}" for sha in gold) or "none"
    return row | {
        "changelog": {**row["changelog"], "version": entry.version, "entry": entry.text},
        "numbers": numbers,
        "gold_roles": {sha: roles[sha] for sha in gold},
        "gold_commits": gold,
        "gold_note": "commits naming " + ", ".join(f"#{n}" for n in numbers) + ": " + named,
    }


def _who_gold(row: dict[str, Any], clones: Clones) -> dict[str, Any]:
    git_dir, commit = clones.git_dir(row["repo"]), row["commit"]
    symbol = find_symbol(git_dir, commit, row["path"], row["symbol"], row.get("lines"))
    change = last_change(git_dir, commit, symbol.path, symbol.start, symbol.end)
    renamed, moved = change.path_then != symbol.path, change.start_then != symbol.start
    note = f"git log -1 -L{symbol.start},{symbol.end}:{symbol.path} {commit[:12]}"
    if renamed or moved:
        note += f" (then at {change.path_then}:{change.start_then})"
    return row | {
        "lines": [symbol.start, symbol.end],
        "renamed": renamed,
        "moved": moved,
        "gold_commits": [change.sha],
        "gold_note": note,
    }


def _since_gold(row: dict[str, Any], clones: Clones) -> dict[str, Any]:
    gold = since_gold(clones.git_dir(row["repo"]), row["commit"], row["tag"], row["area"])
    note = (
        f"git rev-list --no-merges {row['tag']}..{row['commit'][:12]} -- {row['area']}, plus"
        f" the pull-request merges in that range that change it: {len(gold)} commits"
    )
    return row | {"gold_commits": gold, "gold_note": note}


def changelog_entry(git_dir: Path, commit: str, where: dict[str, Any]) -> Entry:
    """The changelog entry whose bullet is on line `where["line"]` of `where["path"]`."""
    entries = parse_changelog(run_git(git_dir, "show", f"{commit}:{where['path']}"))
    found = [e for e in entries if e.line == int(where["line"])]
    if not found or not found[0].numbers:
        raise CaseError(f"{where['path']}:{where['line']} is not an entry naming a number")
    return found[0]


def check_paraphrase(case_id: str, question: str, entry: Entry) -> None:
    """A question never carries the entry's numbers, nor is it the entry pasted."""
    for number in entry.numbers:
        if re.search(rf"(?<!\d){number}(?!\d)", question):
            raise CaseError(f"{case_id}: the question names #{number}")
    if _words(question) and _words(question) in _words(entry.text):
        raise CaseError(f"{case_id}: the question is the changelog entry verbatim")


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def find_symbol(
    git_dir: Path, commit: str, path: str, name: str, lines: Sequence[int] | None
) -> Symbol:
    source = run_git(git_dir, "show", f"{commit}:{path}")
    found = [s for s in definitions(path, source) if s.name == name]
    if len(found) > 1 and lines:
        found = [s for s in found if s.start == lines[0]] or found
    if len(found) != 1:
        raise CaseError(f"{path} at {commit[:12]} defines {name!r} {len(found)} times")
    return found[0]


def cmd_derive(args: argparse.Namespace) -> int:
    clones = Clones(args.clones)
    rows = [derive_row(row, clones) for _, row in read_rows(args.cases)]
    empty = [r["id"] for r in rows if not r["gold_commits"]]
    if args.write:
        write_rows(args.cases, rows)
    counts = Counter(r["kind"] for r in rows)
    print(f"{len(rows)} cases ({dict(counts)}); without gold: {', '.join(empty) or 'none'}")
    return 1 if empty else 0


def cmd_check(args: argparse.Namespace) -> int:
    """Re-derive the gold of every "who" case (every case with --all); 1 if any drifted."""
    clones = Clones(args.clones)
    drifted = 0
    cases = load_history_cases([args.cases])
    for case in cases:
        if case.kind != "who" and not args.all:
            continue
        fresh = derive_row(case.row, clones)["gold_commits"]
        if list(case.gold_commits) != fresh:
            drifted += 1
            print(f"{case.id}: gold {_short(case.gold_commits)} now {_short(fresh)}")
    checked = sum(1 for c in cases if c.kind == "who" or args.all)
    print(f"gold checked: {checked} cases, {drifted} drifted")
    return 1 if drifted else 0


def _short(shas: Sequence[str]) -> str:
    return ",".join(s[:10] for s in shas[:5]) + ("..." if len(shas) > 5 else "")


def cmd_entries(args: argparse.Namespace) -> int:
    clones = Clones(args.clones)
    git_dir = clones.git_dir(args.repo)
    commit = args.commit or run_git(git_dir, "rev-parse", "HEAD^{commit}").strip()
    history = clones.history(args.repo, commit)
    entries = parse_changelog(run_git(git_dir, "show", f"{commit}:{args.changelog}"))
    rows = []
    for entry in entries:
        if not entry.numbers:
            continue
        roles = history.gold_for(list(entry.numbers))
        gold = ordered_gold(history, roles)
        rows.append(
            {
                "repo": args.repo,
                "commit": commit,
                "changelog": {
                    "path": args.changelog,
                    "line": entry.line,
                    "version": entry.version,
                    "entry": entry.text,
                },
                "numbers": list(entry.numbers),
                "gold": [[sha[:10], roles[sha], history.commits[sha].subject] for sha in gold],
            }
        )
    write_rows(args.out, rows)
    with_gold = sum(1 for r in rows if r["gold"])
    print(f"{len(entries)} entries, {len(rows)} with numbers, {with_gold} with gold commits")
    return 0


def cmd_symbols(args: argparse.Namespace) -> int:
    clones = Clones(args.clones)
    git_dir = clones.git_dir(args.repo)
    commit = args.commit or run_git(git_dir, "rev-parse", "HEAD^{commit}").strip()
    symbols, pool, sample = sample_symbols(
        git_dir, commit, args.under, args.sample, args.seed, args.min_lines
    )
    rows = []
    for s in sample:
        change = last_change(git_dir, commit, s.path, s.start, s.end)
        touched = run_git(git_dir, "log", "-1", "--format=%H", commit, "--", s.path).strip()
        rows.append(
            {
                "repo": args.repo,
                "commit": commit,
                "path": s.path,
                "symbol": s.name,
                "lines": [s.start, s.end],
                "gold": change.sha,
                "subject": history_subject(clones.history(args.repo, commit), change.sha),
                "renamed": change.path_then != s.path,
                "moved": change.start_then != s.start,
                "file_changed_since": touched != change.sha,
            }
        )
    write_rows(args.out, rows)
    print(f"{len(symbols)} definitions, {len(pool)} unique and 4-80 lines, {len(rows)} sampled")
    return 0


def sample_symbols(
    git_dir: Path, commit: str, under: Sequence[str], size: int, seed: int, min_lines: int
) -> tuple[list[Symbol], list[Symbol], list[Symbol]]:
    """Every definition, those defined once and `min_lines`-80 lines long, and `size` of
    those drawn with `seed`."""
    symbols = _scan(git_dir, commit, under)
    names = Counter(s.name for s in symbols)
    pool = [s for s in symbols if names[s.name] == 1 and min_lines <= s.lines <= 80]
    sample = random.Random(seed).sample(pool, min(size, len(pool)))
    return symbols, pool, sample


def history_subject(history: History, sha: str) -> str:
    commit = history.commits.get(sha)
    return commit.subject if commit else ""


def _scan(git_dir: Path, commit: str, under: Sequence[str]) -> list[Symbol]:
    listing = run_git(git_dir, "ls-tree", "-r", "--name-only", commit, "--", *under)
    symbols: list[Symbol] = []
    for path in listing.splitlines():
        if not path.endswith(tuple(LANGUAGES)) or "test" in path.lower():
            continue
        symbols.extend(definitions(path, run_git(git_dir, "show", f"{commit}:{path}")))
    return symbols


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("derive", "check", "entries", "symbols"):
        p = sub.add_parser(name)
        p.add_argument("--clones", type=Path, required=True, help="directory of local clones")
        if name in ("derive", "check"):
            p.add_argument("--cases", type=Path, required=True, help="the JSONL case file")
        else:
            p.add_argument("--repo", required=True, help="owner/name")
            p.add_argument("--commit", help="default: the clone's HEAD")
            p.add_argument("--out", type=Path, required=True, help="candidates (JSONL)")
    sub.choices["derive"].add_argument("--write", action="store_true", help="rewrite --cases")
    sub.choices["check"].add_argument("--all", action="store_true", help="every kind's gold")
    sub.choices["entries"].add_argument("--changelog", required=True, help="its path")
    p = sub.choices["symbols"]
    p.add_argument("--under", action="append", default=[], help="only paths under this")
    p.add_argument("--sample", type=int, default=60)
    p.add_argument("--seed", type=int, default=25)
    p.add_argument("--min-lines", type=int, default=4)
    return ap.parse_args(argv)


COMMANDS = {
    "derive": cmd_derive,
    "check": cmd_check,
    "entries": cmd_entries,
    "symbols": cmd_symbols,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except CaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
