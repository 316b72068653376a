"""The corpus's second dev part: harvested INI, properties, shell and URL lines, fresh values.

`bench/cases/secrets_real_lines.jsonl` (written by `harvest_real.py`) holds real lines of
public configuration files, scripts and documentation with each credential replaced by a
`{Pn}` slot and its shape. `real_corpus()` plants each slot line twice, each time with fresh
random values of that shape (its own seed), in a file made of the harvested lines before it,
the line and a canary; `real_lookalikes()` plants the harvested lines whose value is a
reference, a placeholder or a word, as written. All of it is dev material (looked at while
tuning); it was harvested after the first part's held-out figures were taken.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from bench.secrets_corpus.generate import Format, value
from bench.secrets_corpus.plant import Lookalike, Planted, _canary

REAL_LINES = Path(__file__).resolve().parents[1] / "cases" / "secrets_real_lines.jsonl"
# The third dev part: more repositories, harvested after the second part's misses were fixed.
REAL_LINES_THREE = REAL_LINES.with_name("secrets_real_lines_3.jsonl")
SEED = "codecite-secrets-round-three-real-files"
VALUES_PER_LINE = 2
PART = "real"  # the `part` of its values in the harvest's reports
_COMMENT = {"ini": "; ", "properties": "# ", "shell": "# ", "url": "# "}
_SUFFIX = {"ini": ".ini", "properties": ".properties", "shell": ".sh", "url": ".sh"}


def _cases(kind: str, lines: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in lines.read_text().splitlines()]
    return [row for row in rows if row["kind"] == kind]


def planted_path(case: dict[str, object]) -> str:
    """The harvested file's name with its class's extension when it has another (a
    docstring's INI example becomes an `.ini` file, `env.example` a script)."""
    path = str(case["path"])
    suffix = _SUFFIX[str(case["class"])]
    if case["class"] == "url" and path.endswith((".md", ".yaml", ".yml", ".py", ".sh")):
        return path
    return path if path.endswith(suffix) else re.sub(r"\.\w+$", "", path) + suffix


def _provider(case: dict[str, object]) -> str:
    source = str(case["source"]).split("@", 1)[0]
    return f"{source}:{case['name'] or case['template']}"


def real_corpus(start: int = 0, lines: Path = REAL_LINES) -> list[Planted]:
    rng = random.Random(SEED if lines == REAL_LINES else f"{SEED}:{lines.name}")
    out: list[Planted] = []
    for case in _cases("secret", lines):
        cls = str(case["class"])
        specs = [str(s) for s in case["specs"]]  # type: ignore[attr-defined]
        fmt = Format(_provider(case), cls, str(case["name"]), specs[0], "harvested", cls == "url")
        for _ in range(VALUES_PER_LINE):
            n = start + len(out)
            drawn = [value(Format("", "", "", spec, "", False), rng)[0] for spec in specs]
            line = str(case["template"])
            for index, part in enumerate(drawn):
                line = line.replace(f"{{P{index}}}", part)
            canary = _canary(rng, n)
            before = [str(b) for b in case["before"]]  # type: ignore[attr-defined]
            text = "\n".join([*before, line, _COMMENT[cls] + canary]) + "\n"
            secrets = tuple(d for d in drawn if len(d) >= 6)
            pid = f"r{n:04d}"
            out.append(
                Planted(pid, fmt, line, secrets, f"real_{cls}", cls,
                        f"{pid}/{planted_path(case)}", text, canary)
            )  # fmt: skip
    return out


def real_lookalikes(start: int = 0, lines: Path = REAL_LINES) -> list[Lookalike]:
    out: list[Lookalike] = []
    for case in _cases("lookalike", lines):
        n = start + len(out)
        before = [str(b) for b in case["before"]]  # type: ignore[attr-defined]
        line = str(case["template"])
        text = "\n".join([*before, line]) + "\n"
        path = f"l{n:04d}/{planted_path(case)}"
        out.append(
            Lookalike(f"l{n:04d}", f"real_{case['class']}", str(case["source"]), path, text,
                      line.strip())
        )  # fmt: skip
    return out


def all_values() -> list[Planted]:
    """Both parts: the generated formats' values, then the harvested lines'."""
    from bench.secrets_corpus.plant import corpus

    second = real_corpus()
    return [*corpus(), *second, *real_corpus(len(second), REAL_LINES_THREE)]


def all_lookalikes() -> list[Lookalike]:
    from bench.secrets_corpus.plant import lookalikes

    first = [*lookalikes(), *real_lookalikes(len(lookalikes()))]
    return [*first, *real_lookalikes(len(first), REAL_LINES_THREE)]
