"""Secrets kept in the index: the corpus planted in a repository, indexed, every byte searched.

    PYTHONPATH=. .venv/bin/python bench/secrets_index_eval.py --baseline 120c378
    PYTHONPATH=. .venv/bin/python bench/secrets_index_eval.py --baseline 120c378 \\
        --candidates kingfisher,betterleaks,detect_secrets --json /tmp/eval.json

The corpus (`bench/secrets_corpus`: values generated from 494 documented
formats of 379 providers, each planted in one file of one context, and
look-alikes harvested from public repositories) is written to a throwaway
git repository. Each variant indexes it with no keys into its own
CODECITE_HOME, in a child process; then every file under that home (index,
symbol table, segment files, logs) is read and searched:

- a value is KEPT when one of its secret parts is found, whole or as a run of
  12 or more letters and digits of it, as written or lower-cased;
- a look-alike is REDACTED when its line is not found as written;
- a file is LOST when its canary (an ordinary sentence) is not found.

Variants: `main@<baseline>` (that commit's whole tree, from `git archive`),
`this tree`, and for each candidate (`bench/secrets_candidates.py`) the
candidate alone and layered under codecite's scrubber, both in this tree's
pipeline. Providers are split into a dev and a held-out third (by a hash of
the name): the held-out figures were not looked at while tuning.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.secrets_corpus.plant import Planted

ROOT = Path(__file__).resolve().parents[1]
_PIECE = re.compile(r"[A-Za-z0-9]{12,}")
_SCRUBBED_ENV = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "PINECONE_API_KEY", "CODECITE_DATABASE_URL",
    "DATABASE_URL", "CODECITE_CONFIG", "CODECITE_INDEX",
)  # fmt: skip


@dataclass
class Outcome:
    variant: str
    seconds: float
    status: str
    kept: set[str] = field(default_factory=set)  # planted ids
    lost: set[str] = field(default_factory=set)  # ids whose canary is missing
    redacted: set[str] = field(default_factory=set)  # look-alike ids


def held_out(provider: str) -> bool:
    return zlib.crc32(provider.encode()) % 3 == 0


def split_of(planted: Planted) -> str:
    """dev | held-out (the generated part, by provider) | real files (dev): the harvested
    lines of the second part, all of them development material."""
    if planted.context.startswith("real_"):
        return "real files (dev)"
    return "held-out" if held_out(planted.fmt.provider) else "dev"


def write_repo(folder: Path) -> Path:
    from bench.secrets_corpus.plant_real import all_lookalikes, all_values

    repo = folder / "repo"
    for item in [*all_values(), *all_lookalikes()]:
        target = repo / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(item.text)
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "corpus"], check=True)
    return repo


def baseline_tree(commit: str, folder: Path) -> Path:
    tree = folder / f"main-{commit}"
    tree.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "bot", "adapters"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def run_variant(name: str, tree: Path, scrubber: str, repo: Path, home: Path) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    env.update(
        CODECITE_HOME=str(home),
        CODECITE_EMBED_MODEL="none",
        CODECITE_INGEST_WORKERS="1",
        PYTHONPATH=os.pathsep.join([str(tree), str(ROOT)]),
    )
    started = time.monotonic()
    cpu = _children_cpu()
    done = subprocess.run(
        [sys.executable, __file__, "child", str(tree), scrubber, str(repo)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{name}: the index run failed:\n{done.stderr[-3000:]}")
    CPU_SECONDS[name] = _children_cpu() - cpu
    return time.monotonic() - started, done.stdout


CPU_SECONDS: dict[str, float] = {}  # variant -> CPU seconds of its last index run


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child(tree: str, scrubber: str, repo: str) -> None:
    """In the child: index `repo` with the tree's pipeline (its scrubber replaced unless
    `own`), then print `status`."""
    sys.path.insert(0, tree)
    if scrubber != "own":
        from collections import Counter

        import bot.ingest.prepare as prepare
        from bench.secrets_candidates import scrubber as make
        from bot.ingest.secrets import ScrubResult

        scrub = make(scrubber)
        prepare.scrub = lambda text, path="": ScrubResult(scrub(text, path), Counter())  # type: ignore[assignment]
    from adapters.cli.main import main

    if main(["index", repo]) != 0:
        raise SystemExit(1)
    main(["status"])


def home_bytes(home: Path) -> bytes:
    parts = []
    for directory, _, names in os.walk(home):
        for name in names:
            try:
                parts.append((Path(directory) / name).read_bytes())
            except OSError:
                continue
    return b"\0".join(parts)


def score(variant: str, seconds: float, status: str, blob: bytes) -> Outcome:
    from bench.secrets_corpus.plant_real import all_lookalikes, all_values

    lower = blob.lower()
    out = Outcome(variant, seconds, status)
    for planted in all_values():
        if any(_found(s, blob, lower) for s in planted.secrets):
            out.kept.add(planted.id)
        if planted.canary.encode() not in blob:
            out.lost.add(planted.id)
    for look in all_lookalikes():
        if look.probe.encode() not in blob:
            out.redacted.add(look.id)
    return out


def _found(secret: str, blob: bytes, lower: bytes) -> bool:
    if secret.encode() in blob or secret.lower().encode() in lower:
        return True
    return any(
        piece.encode() in blob or piece.lower().encode() in lower
        for piece in _PIECE.findall(secret)
    )


# ---------------------------------------------------------------- report


def _rate(ids: Iterable[str], hit: set[str]) -> str:
    ids = list(ids)
    n = sum(i in hit for i in ids)
    return f"{n}/{len(ids)} {n / max(1, len(ids)):.1%}"


def _row(label: str, cells: Iterable[str]) -> str:
    return " | ".join([f"{label:<24}", *(f"{c:>22}" for c in cells)])


def _groups(planted: list[Planted]) -> dict[str, dict[str, list[str]]]:
    groups: dict[str, dict[str, list[str]]] = {"overall": {"all": [p.id for p in planted]}}
    for title in ("split", "class", "shape", "context", "real files: class", "real files: shape"):
        groups[title] = defaultdict(list)
    for p in planted:
        groups["split"][split_of(p)].append(p.id)
        groups["class"][p.cls].append(p.id)
        groups["shape"][p.fmt.shape].append(p.id)
        groups["context"][p.context].append(p.id)
        if split_of(p) == "real files (dev)":
            groups["real files: class"][p.cls].append(p.id)
            groups["real files: shape"][p.fmt.shape].append(p.id)
    return groups


def report(outcomes: list[Outcome]) -> str:
    from bench.secrets_corpus.plant_real import all_lookalikes, all_values

    planted = all_values()
    looks = all_lookalikes()
    providers = len({p.fmt.provider for p in planted})
    lines = [f"corpus: {len(planted)} values, {providers} providers; {len(looks)} look-alikes"]
    for title, rows in _groups(planted).items():
        lines += ["", _row(f"kept: {title}", (o.variant for o in outcomes))]
        lines += [_row(key, (_rate(rows[key], o.kept) for o in outcomes)) for key in sorted(rows)]
    by_category: dict[str, list[str]] = defaultdict(list)
    for look in looks:
        by_category[look.category].append(look.id)
    lines += ["", _row("look-alikes redacted", (o.variant for o in outcomes))]
    lines.append(_row("all", (_rate([x.id for x in looks], o.redacted) for o in outcomes)))
    for key in sorted(by_category):
        lines.append(_row(key, (_rate(by_category[key], o.redacted) for o in outcomes)))
    keys = [p.id for p in planted if p.fmt.shape == "private_key"]
    lines += [
        "",
        _row("files lost (canary)", (_rate([p.id for p in planted], o.lost) for o in outcomes)),
        _row("  of private keys", (_rate(keys, o.lost) for o in outcomes)),
        _row("index run seconds", (f"{o.seconds:.1f}" for o in outcomes)),
    ]
    base = outcomes[0]
    for o in outcomes[1:]:
        worse = sorted(o.kept - base.kept)
        lines.append(f"kept by {o.variant} but redacted by {base.variant}: {len(worse)}")
        lines.extend(f"    {_describe(i, planted)}" for i in worse[:15])
    return "\n".join(lines)


def _describe(planted_id: str, planted: list[Planted]) -> str:
    p = next(p for p in planted if p.id == planted_id)
    return f"{p.id} {p.fmt.provider}/{p.fmt.kind} ({p.fmt.shape}) in {p.context}"


def failures(outcome: Outcome, *, dev_only: bool = True) -> list[str]:
    from bench.secrets_corpus.plant_real import all_values

    return [
        _describe(p.id, [p])
        for p in all_values()
        if p.id in outcome.kept and not (dev_only and split_of(p) == "held-out")
    ]


def cost(args: argparse.Namespace) -> None:
    """Index each --cost tree with each variant, in one process each (workers=1, so a
    candidate can stand in for the scrubber), --repeat rounds alternating the variants'
    order; wall and CPU seconds of each run, then medians and their ratios to the baseline."""
    with tempfile.TemporaryDirectory(prefix="codecite-secrets-cost-") as scratch:
        folder = Path(scratch)
        variants = [(f"main@{args.baseline}", baseline_tree(args.baseline, folder), "own")]
        variants.append(("this tree", ROOT, "own"))
        variants += [
            (f"codecite+{c}", ROOT, f"codecite+{c}") for c in args.candidates.split(",") if c
        ]
        for tree in args.cost:
            runs: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for round_ in range(args.repeat):
                order = variants if round_ % 2 == 0 else variants[::-1]
                for name, root, scrubber in order:
                    home = folder / f"cost-{len(runs[name])}-{zlib.crc32(name.encode())}"
                    taken, _ = run_variant(name, root, scrubber, Path(tree), home)
                    runs[name].append((taken, CPU_SECONDS[name]))
                    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
                    print(f"{tree}: {name}: {taken:.1f}s wall, {CPU_SECONDS[name]:.1f}s CPU, "
                          f"load {load}", flush=True)  # fmt: skip
            base_wall, base_cpu = _medians(runs[variants[0][0]])
            for name, _, _ in variants:
                wall, cpu = _medians(runs[name])
                print(
                    f"{tree}: {name}: median of {args.repeat}: {wall:.1f}s wall "
                    f"({wall / base_wall:.2f}x), {cpu:.1f}s CPU ({cpu / base_cpu:.2f}x)"
                )


def _medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="120c378", help="the commit measured beside")
    parser.add_argument("--candidates", default="", help="comma-separated: kingfisher,...")
    parser.add_argument("--alone", action="store_true", help="also each candidate alone")
    parser.add_argument("--json", help="write ids kept, lost and redacted per variant here")
    parser.add_argument("--failures", action="store_true", help="list this tree's kept (dev)")
    parser.add_argument(
        "--cost", action="append", default=[], help="time each variant's index of this tree"
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds of --cost runs")
    args = parser.parse_args()
    if args.cost:
        cost(args)
        return
    with tempfile.TemporaryDirectory(prefix="codecite-secrets-eval-") as scratch:
        folder = Path(scratch)
        repo = write_repo(folder)
        variants = [(f"main@{args.baseline}", baseline_tree(args.baseline, folder), "own")]
        variants.append(("this tree", ROOT, "own"))
        for name in filter(None, args.candidates.split(",")):
            if args.alone:
                variants.append((name, ROOT, name))
            variants.append((f"codecite+{name}", ROOT, f"codecite+{name}"))
        outcomes = []
        for n, (name, tree, scrubber) in enumerate(variants):
            home = folder / f"home-{n}"
            seconds, status = run_variant(name, tree, scrubber, repo, home)
            outcomes.append(score(name, seconds, status, home_bytes(home)))
    print(report(outcomes))
    print(f"\nload average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    if args.failures:
        print("\n".join(failures(outcomes[1])))
    if args.json:
        doc = {
            o.variant: {"kept": sorted(o.kept), "lost": sorted(o.lost),
                        "redacted": sorted(o.redacted), "status": o.status}
            for o in outcomes
        }  # fmt: skip
        Path(args.json).write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
