"""Do extractive answers quote the lines that answer? Real questions on real repositories.

    .venv/bin/python bench/excerpts.py --clones /work/.mirror

Each check indexes a repository at its clone's newest commit, asks a question with
no model (extractive answer) and looks for the line that answers it in the first
cited excerpt, and anywhere in the answer. Exit status 1 when a check fails.
Nothing is downloaded; clones come from --clones.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import CaseError, case_arguments, find_clone, head_commit, materialise
from bench.report import table
from bench.systems import CodeciteSystem, index_name
from bot.core import CLI

# (repository, question, a line the answer must quote)
CHECKS = (
    ("psf/requests", "what happens if the netrc file is malformed?", "except (NetrcParseError"),
    ("pytest-dev/pytest", "what does --setup-show do?", 'help="Show setup of fixtures'),
    ("pallets/flask", "what does the --debug option of flask run do?", "--debug"),
    (
        "pallets/flask",
        "what happens if the secret key is missing when signing the session?",
        "if not app.secret_key:",
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    args = case_arguments(__doc__, cases=False).parse_args(argv)
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="codecite-excerpts-") as scratch:
        system = CodeciteSystem(Path(scratch) / "home")
        try:
            indexed: set[str] = set()
            for repo, question, expected in CHECKS:
                if repo not in indexed:
                    clone = find_clone(args.clones, repo)
                    tree = materialise(clone, head_commit(clone), Path(scratch) / repo)
                    system.prepare(repo, tree)
                    indexed.add(repo)
                answer = system.core.ask(question, CLI, repos=frozenset({index_name(repo)}))
                first = answer.text.split("```")[1] if "```" in answer.text else ""
                label = answer.citations[0].label if answer.citations else "-"
                ok = not expected or expected in answer.text
                failed += not ok
                rows.append([repo, question, label, expected in first, "yes" if ok else "NO"])
                print(f"--- {repo}: {question}\n{answer.text}\n", file=sys.stderr)
        except CaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            system.close()
    print(table(["repo", "question", "first citation", "in first excerpt", "quoted"], rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
