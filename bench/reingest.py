"""Re-ingest cost on a real repository: what each kind of change costs in time and embeddings.

    .venv/bin/python bench/reingest.py                         # the stdlib, as a git repository
    .venv/bin/python bench/reingest.py --source /work/.mirror/pylint-dev+pylint/repo
    .venv/bin/python bench/reingest.py --pinecone     # CODECITE_INDEX=pinecone, fake data plane

Scenarios, in order, on one index: a full first index; an unchanged re-index;
a commit that edits one function in one file; a commit that renames a
directory. Embeddings go to the local fake OpenAI server (tests/servers), so
calls, inputs and tokens are counted exactly as a real service would bill
them, with no network. `--source` may be a git directory (its HEAD is checked
out into a scratch clone) or a plain directory (copied and committed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone

DIMENSIONS = 256

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def working_copy(source: Path, dest: Path) -> Path:
    if (source / "HEAD").exists() or (source / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(source), str(dest)], check=True)
        return dest
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "site-packages"))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "import")
    return dest


def edit_one_function(repo: Path) -> str:
    """Append a line inside the body of the first Python function found."""
    for path in sorted(repo.rglob("*.py")):
        if ".git" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines):
            if line.startswith("def ") and line.rstrip().endswith(":") and i + 1 < len(lines):
                indent = lines[i + 1][: len(lines[i + 1]) - len(lines[i + 1].lstrip())] or "    "
                lines.insert(i + 1, f"{indent}_bench_marker = 1  # one-line change")
                path.write_text("\n".join(lines) + "\n", encoding="utf-8")
                git(repo, "commit", "-q", "-am", "edit one function")
                return str(path.relative_to(repo))
    raise SystemExit("no Python function found to edit")


def rename_a_directory(repo: Path) -> str:
    dirs = [p for p in repo.iterdir() if p.is_dir() and not p.name.startswith(".")]
    target = max(dirs, key=lambda d: sum(1 for _ in d.rglob("*.py")))
    git(repo, "mv", target.name, f"{target.name}_renamed")
    git(repo, "commit", "-q", "-m", "rename a directory")
    return target.name


def measure(core, fake: FakeOpenAI, repo: Path, label: str) -> dict[str, object]:
    calls, inputs = fake.embedding_calls, fake.embedding_inputs
    started = time.perf_counter()
    report = core.index_repo(str(repo), name="bench")
    return {
        "scenario": label,
        "seconds": round(time.perf_counter() - started, 2),
        "files_changed": report.files_added + report.files_changed + report.files_removed,
        "chunks_added": report.chunks_added,
        "embedding_calls": fake.embedding_calls - calls,
        "embedding_inputs": fake.embedding_inputs - inputs,
        "embedding_tokens": report.embedding_tokens,
        "tokens_saved_by_cache": report.embedding_tokens_saved,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--pinecone", action="store_true", help="index into a local fake Pinecone")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="codecite-reingest-"))
    try:
        repo = working_copy(args.source.resolve(), scratch / "repo")
        with FakeOpenAI(dimensions=DIMENSIONS) as fake, FakePinecone(dimension=DIMENSIONS) as pc:
            os.environ.update(
                CODECITE_HOME=str(scratch / "home"),
                OPENAI_API_KEY="sk-bench",
                OPENAI_BASE_URL=fake.base_url,
                CODECITE_EMBED_DIMENSIONS=str(DIMENSIONS),
            )
            if args.pinecone:
                os.environ.update(
                    CODECITE_INDEX="pinecone", PINECONE_API_KEY=pc.api_key, PINECONE_HOST=pc.url
                )
            from bot.config import FileConfig, Settings
            from bot.core import Core

            core = Core.from_settings(Settings(), FileConfig())
            init = getattr(core.index, "init_index", None)
            if init is not None:
                init(DIMENSIONS)
            rows = [measure(core, fake, repo, "first index")]
            rows.append(measure(core, fake, repo, "unchanged re-index"))
            edited = edit_one_function(repo)
            rows.append(measure(core, fake, repo, f"one-function commit ({edited})"))
            renamed = rename_a_directory(repo)
            rows.append(measure(core, fake, repo, f"rename directory {renamed}/"))
            core.close()
        for row in rows:
            print(json.dumps(row))
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
