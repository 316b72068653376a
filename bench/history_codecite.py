"""codecite as the history evaluation drives it: through the interface the feature keeps.

    codecite index PATH --name NAME --history-commits N   (N = every commit of the clone)
    Core.answer(Question(text, scope=frozenset({NAME})))  (no keys: the embedded default)
    codecite search --json --repo NAME --top-k 20 TEXT     (the commit hits among them)

"The commits the answer cites" are `[c.sha for c in answer.citations if getattr(c, "kind",
"code") == "commit"]`, in order; the search's are the rows with `"kind": "commit"`. A
checkout without the feature (no `--history-commits` in `codecite index --help`) fails
with one line, NO_HISTORY, and the harness carries on with the other systems.

Each repository is indexed from a `git clone --shared` of the mirror, checked out at the
pinned commit on a branch of its own, so its whole history (and its tags) are there and
nothing is downloaded. Model keys, the database URL and the config file are removed from
the environment: the run measures the embedded default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import MODEL_ENV, child_env
from bench.history_git import run_git

NO_HISTORY = "codecite has no history in this checkout"
SEARCH_TOP_K = 20
_SCRUB = (*MODEL_ENV, "CODECITE_DATABASE_URL", "DATABASE_URL", "CODECITE_CONFIG", "PINECONE_HOST")


class SystemUnavailable(Exception):
    """A system that cannot run here; its message is one line for the report."""


def codecite_command() -> list[str]:
    script = Path(sys.executable).parent / "codecite"
    return [str(script)] if script.exists() else [sys.executable, "-m", "adapters.cli.main"]


def has_history(command: list[str]) -> bool:
    help_text = subprocess.run(
        [*command, "index", "--help"], capture_output=True, text=True, check=False, env=child_env()
    ).stdout
    return "--history-commits" in help_text


def index_name(repo: str, commit: str) -> str:
    return f"{repo.replace('/', '__')}__{commit[:8]}"


class CodeciteHistory:
    name = "codecite"
    sources = ("answer", "search")

    def __init__(self, work: Path) -> None:
        self._command = codecite_command()
        if not has_history(self._command):
            raise SystemUnavailable(NO_HISTORY)
        for key in _SCRUB:
            os.environ.pop(key, None)
        self._work = work
        self._env = {"CODECITE_HOME": str(work / "home")}
        self._core: Any = None

    def prepare(self, repo: str, git_dir: Path, commit: str) -> None:
        checkout = self._work / "checkouts" / index_name(repo, commit)
        if not checkout.exists():
            checkout.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["git", "clone", "-q", "--shared", "--no-checkout", str(git_dir), str(checkout)],
                check=True,
                capture_output=True,
            )
            subprocess.run(
                ["git", "-C", str(checkout), "checkout", "-q", "-B", "history-eval", commit],
                check=True,
                capture_output=True,
            )
        commits = int(run_git(git_dir, "rev-list", "--count", commit).strip())
        name = index_name(repo, commit)
        args = ["index", str(checkout), "--name", name, "--history-commits", str(commits + 1)]
        done = subprocess.run(
            [*self._command, *args], capture_output=True, text=True, env=child_env(self._env)
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise SystemUnavailable(f"codecite index {repo} failed: {tail[:200]}")

    def ask(self, repo: str, commit: str, question: str) -> dict[str, list[str]]:
        from bot.errors import BotError
        from bot.models import Question

        name = index_name(repo, commit)
        try:
            answer = self._open().answer(Question(question, scope=frozenset({name})))
            cited = [c.sha for c in answer.citations if getattr(c, "kind", "code") == "commit"]
        except BotError as exc:  # a question the bot refuses scores as citing nothing
            print(f"codecite refused {question!r}: {exc.user_message}", file=sys.stderr)
            cited = []
        except Exception as exc:  # a crash is a finding; the other questions still run
            print(f"codecite crashed on {question!r}: {exc!r}"[:300], file=sys.stderr)
            cited = []
        return {"answer": cited, "search": self._search(name, question)}

    def core(self) -> Any:
        """The in-process Core over every repository prepared so far."""
        return self._open()

    def _open(self) -> Any:
        if self._core is None:  # after every index: the in-process Core sees them all
            from bench.systems import CodeciteSystem

            self._core = CodeciteSystem(Path(self._env["CODECITE_HOME"])).core
        return self._core

    def _search(self, name: str, question: str) -> list[str]:
        args = ["search", "--json", "--repo", name, "--top-k", str(SEARCH_TOP_K), question]
        done = subprocess.run(
            [*self._command, *args], capture_output=True, text=True, env=child_env(self._env)
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            print(f"codecite search failed: {tail[:200]}", file=sys.stderr)
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return [str(r["sha"]) for r in rows if r.get("kind") == "commit" and r.get("sha")]

    def close(self) -> None:
        if self._core is not None:
            self._core.close()
