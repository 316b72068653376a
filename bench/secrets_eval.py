"""Secret scrubbing: kept secrets and redacted look-alikes per provider and per context, and cost.

    PYTHONPATH=. .venv/bin/python bench/secrets_eval.py
    PYTHONPATH=. .venv/bin/python bench/secrets_eval.py --baseline e6283b2 \\
        --speed /root/.pyenv/versions/3.11.7/lib/python3.11 --speed . \\
        --gitleaks /work/.mirror/gitleaks+gitleaks/repo

The corpus is tests/reliability/secret_corpus (planted secrets of 119
providers in 32 contexts, and look-alikes). `--baseline COMMIT` loads the
scrubber of that commit (`bot/ingest/secrets.py`) from git and measures it
side by side. `--speed DIR` times `scrub` over every text file under DIR
(best of three). `--gitleaks REPO` is a held-out check on material we did
not write: the literal true- and false-positive examples in gitleaks' rule
definitions (cmd/generate/config/rules/*.go), read from a local clone at run
time and never stored here.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from bot.ingest.secrets import scrub
from tests.support.secret_corpus.evaluate import (
    Report,
    evaluate,
    table,
    unannounced_in_neutral_contexts,
)

Scrubber = Callable[[str, str], str]
_SKIP_DIRS = {"site-packages", ".git", "__pycache__", ".venv", "node_modules", ".mypy_cache"}


def current(text: str, path: str) -> str:
    return scrub(text, path).text


def baseline(commit: str) -> Scrubber:
    """The scrubber as it was at `commit`, loaded from git without touching the work tree."""
    source = subprocess.run(
        ["git", "show", f"{commit}:bot/ingest/secrets.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("secrets_baseline")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, "secrets_baseline.py", "exec"), module.__dict__)
    return lambda text, path: module.scrub(text, path).text


def summary(name: str, report: Report) -> str:
    kept = sum(o.kept for o in report.outcomes)
    exact = sum(o.exact for o in report.outcomes)
    lines = sum(not o.lines_kept for o in report.outcomes)
    return (
        f"{name}: kept {kept}/{len(report.outcomes)} = {report.kept_rate:.2%}; "
        f"look-alikes redacted {len(report.lookalikes_redacted)}/{report.lookalikes_total} = "
        f"{report.lookalike_rate:.1%}; exact {exact / len(report.outcomes):.1%}; "
        f"line counts changed {lines}"
    )


def text_files(root: Path) -> list[tuple[str, str]]:
    out = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        for name in names:
            path = Path(directory) / name
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192] or len(data) > 1_000_000:
                continue
            out.append((str(path.relative_to(root)), data.decode("utf-8", "replace")))
    return out


def timed(scrubber: Scrubber, files: list[tuple[str, str]]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for path, text in files:
            scrubber(text, path)
        best = min(best, time.perf_counter() - started)
    return best


_GO_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')
_BLOCK = re.compile(r"\b(tps|fps)\s*(?::=|=)\s*\[\]string\{(.*?)\n\t\}", re.S)
_SAMPLE = re.compile(r'GenerateSampleSecrets?\("([^"]+)",\s*"((?:[^"\\]|\\.)*)"\)')


def gitleaks_examples(repo: Path) -> dict[str, list[str]]:
    """gitleaks' literal examples: `tps`/`fps` lists, and the secrets given to its sample maker.

    A sample secret is planted as gitleaks' own generator would name it
    (`<id>_token = "<secret>"`), and bare, as a line of prose.
    """
    found: dict[str, list[str]] = {"tps listed": [], "tps named": [], "tps bare": [], "fps": []}
    for source in _rule_sources(repo):
        for block in _BLOCK.finditer(source):
            for literal in _GO_STRING.finditer(block.group(2)):
                quoted, raw = literal.groups()
                text = raw if raw is not None else _unescape(quoted)
                if len(text) >= 8:
                    found["fps" if block.group(1) == "fps" else "tps listed"].append(text)
        for ident, secret in _SAMPLE.findall(source):
            secret = _unescape(secret)
            found["tps named"].append(f'{ident}_token = "{secret}"\n')
            found["tps bare"].append(f"The value is {secret} for now.\n")
    return found


def _rule_sources(repo: Path) -> list[str]:
    """The rule files, from a work tree or (a mirror) from the git objects at HEAD."""
    folder = "cmd/generate/config/rules"
    if (repo / folder).is_dir():
        return [f.read_text() for f in sorted((repo / folder).glob("*.go"))]
    git = ["git", "--git-dir", str(repo)]
    names = subprocess.run(
        [*git, "ls-tree", "--name-only", f"HEAD:{folder}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [
        subprocess.run(
            [*git, "show", f"HEAD:{folder}/{name}"], capture_output=True, text=True
        ).stdout
        for name in names
        if name.endswith(".go")
    ]


def _unescape(go: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), go)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="a commit whose bot/ingest/secrets.py to compare")
    parser.add_argument("--speed", action="append", default=[], help="time scrub over DIR")
    parser.add_argument("--gitleaks", help="a local clone of gitleaks for a held-out check")
    args = parser.parse_args()

    scrubbers: dict[str, Scrubber] = {"current": current}
    if args.baseline:
        scrubbers[f"baseline {args.baseline}"] = baseline(args.baseline)

    report = evaluate(current)
    print(table(report.by_context, "context"), end="\n\n")
    print(table(report.by_provider, "provider"), end="\n\n")
    print("look-alikes redacted:", ", ".join(report.lookalikes_redacted) or "none", end="\n\n")
    for name, scrubber in scrubbers.items():
        print(summary(name, report if name == "current" else evaluate(scrubber)))
    blind = unannounced_in_neutral_contexts()
    print(f"not in the aims: unnamed prefix-less secrets (bare argument, prose): {blind:.0%} kept")

    if args.gitleaks:
        examples = gitleaks_examples(Path(args.gitleaks))
        for kind, texts in examples.items():
            path = "example.py" if kind == "tps named" else "example.txt"
            changed = sum(current(t, path) != t for t in texts)
            share = changed / max(1, len(texts))
            print(f"gitleaks {kind}: {changed}/{len(texts)} redacted ({share:.1%})")

    for root in args.speed:
        files = text_files(Path(root))
        size = sum(len(t) for _, t in files) / 1e6
        cells = [f"{name} {timed(s, files):.2f}s" for name, s in scrubbers.items()]
        print(f"speed {root}: {len(files)} files, {size:.1f} MB: " + ", ".join(cells))


if __name__ == "__main__":
    main()
