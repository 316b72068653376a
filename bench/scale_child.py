"""bench/scale.py's codecite child processes; each prints one JSON line (bench.common.emit).

    scale_child.py index HOME TREE NAME          index TREE into HOME as NAME
    scale_child.py warm HOME QUESTIONS SCOPE [PROFILE]
                                                 one serving process: every question
                                                 unscoped and scoped to SCOPE, top 10

A fresh interpreter for each, so wall time, peak RSS and the modules loaded belong
to that measurement alone. No API keys reach them (bench.common.child_env).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import emit
from bench.ingest import _rss as rss_of
from bench.scale_corpus import ask_all, read_questions

TOP_K = 10
# Top-level packages whose import the issue wants kept off `--help`, `status` and search.
HEAVY = ("slack_bolt", "slack_sdk", "discord", "pinecone", "openai", "tree_sitter", "aiohttp")
# Run with `python -c` in a bare interpreter (nothing of bench/ loaded first): the import of
# what the `codecite` console script imports, timed from inside, and what it drags in
# (`adapters.cli.main` loads only the parser; a parsed command then loads `adapters.cli.run`).
IMPORTS_SNIPPET = f"""
import json, sys, time
started, cpu = time.perf_counter(), time.process_time()
import adapters.cli.main, adapters.cli.run
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
heavy = sorted({{m.partition(".")[0] for m in sys.modules}} & set({HEAVY!r}))
print(json.dumps({{"imports_s": seconds, "imports_cpu_s": cpu, "modules": len(sys.modules),
                  "heavy": heavy}}))
"""


def _core(home: str) -> Any:
    os.environ["CODECITE_HOME"] = home
    from bot.config import FileConfig, LimitsConfig, Settings
    from bot.core import Core

    # SWE-bench issues run to 25k characters; the bot's chat limit is a deployment knob.
    return Core.from_settings(Settings(), FileConfig(limits=LimitsConfig(max_question_chars=10**6)))


def index(home: str, tree: str, name: str) -> None:
    core = _core(home)
    started = time.perf_counter()
    report = core.index_repo(tree, name=name)
    seconds = time.perf_counter() - started
    core.close()
    emit({"files": report.files, "chunks": report.chunks, "seconds": seconds})


def warm(home: str, questions_file: str, scope: str, profile: str = "") -> None:
    from bot.core import CLI

    questions = read_questions(questions_file)
    core = _core(home)
    in_scope = frozenset({scope})

    def unscoped(q: str) -> list[str]:
        return [h.chunk.repo for h in core.search(q, CLI, top_k=TOP_K)]

    def scoped(q: str) -> list[str]:
        return [h.chunk.repo for h in core.search(q, CLI, repos=in_scope, top_k=TOP_K)]

    started, cpu = time.perf_counter(), time.process_time()
    unscoped(questions[0])  # the first search of a process builds the engine
    first, cpu = time.perf_counter() - started, time.process_time() - cpu
    result = ask_all(questions, unscoped, scoped, scope, profile)
    serving = rss_of(os.getpid())
    heavy = sorted({m.partition(".")[0] for m in sys.modules} & set(HEAVY))
    core.close()
    emit(
        {
            "first_search_s": first,
            "first_search_cpu_s": cpu,
            **result,
            "serving_rss": serving,
            "heavy": heavy,
        }
    )


def main(argv: Sequence[str]) -> int:
    modes: dict[str, Callable[..., None]] = {"index": index, "warm": warm}
    if not argv or argv[0] not in modes:
        print(__doc__, file=sys.stderr)
        return 2
    modes[argv[0]](*argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
