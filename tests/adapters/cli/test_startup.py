"""`codecite` loads only what the command needs (issue 17: start fast).

Each case runs the CLI in a fresh interpreter, as `codecite` would, through a small
wrapper that calls `main` and then writes the top-level packages left in
`sys.modules` to a file. The SDKs of chat platforms, Pinecone, OpenAI, PostgreSQL
and the scheduler, and tree-sitter, must stay out of `--help`, `status`, `search`
and an extractive `ask`; `--help` loads nothing of codecite's core at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import ROOT
from tests.support.shop import build_shop

SDKS = frozenset(
    {
        "slack_bolt",
        "slack_sdk",
        "discord",
        "aiohttp",
        "pinecone",
        "openai",
        "httpx",
        "httpx2",
        "psycopg",
        "psycopg_pool",
        "apscheduler",
        "tree_sitter",
    }
)

WRAPPER = """
import json, sys
from adapters.cli.main import main
try:
    status = main(sys.argv[2:])
except SystemExit as exc:  # argparse's --help and usage errors
    status = exc.code
with open(sys.argv[1], "w") as out:
    json.dump({"status": status, "modules": sorted(sys.modules)}, out)
"""


def loaded(
    home: Path, tmp_path: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `codecite *args`; its output and every module it imported."""
    record = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(record), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CODECITE_HOME": str(home), **env},
        timeout=120,
        cwd=ROOT,
    )
    facts = json.loads(record.read_text(encoding="utf-8"))
    assert facts["status"] == 0, result.stderr
    return result, set(facts["modules"])


def top(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def heavy(modules: set[str]) -> set[str]:
    return {p for p in top(modules) if p in SDKS or p.startswith("tree_sitter_")}


@pytest.mark.parametrize("args", [("--help",), ("search", "--help"), ("serve", "--help")])
def test_help_loads_no_sdk_and_nothing_of_the_core(tmp_path, args):
    result, modules = loaded(tmp_path / "home", tmp_path, *args)
    assert "usage: codecite" in result.stdout
    assert heavy(modules) == set()
    assert {"numpy", "pydantic", "rich", "bot"} & top(modules) == set()


def test_status_in_a_fresh_data_directory_loads_no_sdk(tmp_path):
    result, modules = loaded(tmp_path / "home", tmp_path, "status")
    assert "Nothing is indexed here yet." in result.stdout
    assert heavy(modules) == set()
    # The Core builds answers and ingests on first use: status needs neither.
    assert {"bot.answer.compose", "bot.retrieval", "bot.ingest", "bot.jobs"} & modules == set()


def test_status_with_a_model_configured_loads_no_openai(tmp_path):
    """It names the model; the client (and its SDK) waits for a first question."""
    keys = {"OPENAI_API_KEY": "sk-test-123456", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    result, modules = loaded(tmp_path / "home", tmp_path, "status", **keys)
    assert "Model: gpt" in result.stdout
    assert heavy(modules) == set()


@pytest.mark.xfail(
    strict=True,
    reason="bot.index.local imports numpy at module level (the engine's modules); "
    "status reads only the repos table",
)
def test_status_loads_no_numpy(tmp_path):
    _, modules = loaded(tmp_path / "home", tmp_path, "status")
    assert "numpy" not in modules


def test_search_and_ask_load_only_the_embedded_path(make_repo, tmp_path):
    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    indexed, _ = loaded(home, tmp_path, "index", str(repo.path))
    assert "Indexed shop" in indexed.stdout

    found, modules = loaded(home, tmp_path, "search", "retry failed webhooks", "--json")
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert hits and hits[0]["path"].endswith("webhooks.py")
    assert heavy(modules) == set()

    answered, modules = loaded(home, tmp_path, "ask", "where do we retry failed webhooks?")
    assert "shop/webhooks.py:L" in answered.stdout
    assert heavy(modules) == set()


def test_serve_loads_each_adapter_and_the_scheduler_only_when_it_runs_them(tmp_path):
    """`serve --no-schedule` for Discord needs neither Slack's SDK nor APScheduler."""
    snippet = "import sys, adapters.serve; print('\\n'.join(sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert heavy(set(result.stdout.split())) == set()


def test_status_and_repos_with_pinecone_configured_load_no_sdk(make_repo, tmp_path):
    """They read the state kept beside Pinecone; the SDK waits for a first request
    (issue 27: a configured Pinecone cost every command its start-up)."""
    from tests.servers.openai_fake import FakeOpenAI
    from tests.servers.pinecone_fake import FakePinecone

    repo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    with FakeOpenAI(dimensions=8) as openai, FakePinecone(dimension=8) as pinecone:
        env = {
            "CODECITE_INDEX": "pinecone",
            "PINECONE_API_KEY": pinecone.api_key,
            "PINECONE_HOST": pinecone.url,
            "OPENAI_API_KEY": "sk-test-123456",
            "OPENAI_BASE_URL": openai.base_url,
            "CODECITE_EMBED_DIMENSIONS": "8",
        }
        indexed, _ = loaded(home, tmp_path, "index", str(repo.path), **env)
        assert "Indexed shop" in indexed.stdout
        for command in ("status", "repos"):
            result, modules = loaded(home, tmp_path, command, **env)
            assert "shop" in result.stdout
            assert heavy(modules) == set(), command
        found, modules = loaded(home, tmp_path, "search", "retry failed webhooks", **env)
        assert "webhooks.py" in found.stdout
        assert "pinecone" in top(modules)  # the search itself is Pinecone's
