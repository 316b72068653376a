"""A file whose path holds a token is not indexed: its path would be stored, embedded and cited."""

from __future__ import annotations

import subprocess

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.ingest.filters import path_reason, skip_reason
from tests.support.paths import ROOT

GLPAT = "glpat-" + "Rk3vX9qLm2Tz8WbN4cYd"
HF = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"


@pytest.mark.parametrize(
    "path",
    [
        f"secrets/{GLPAT}.txt",
        f"notes/{HF}.md",
        f"backup/token-{GLPAT}/config.yaml",
        "hooks/https:/hooks.slack.com/services/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.json",
    ],
)
def test_a_path_holding_a_token_is_skipped(path):
    assert path_reason(path) == "secret_in_path"
    assert skip_reason(path, 10, b"x = 1\n") == "secret_in_path"


def test_ordinary_paths_are_not_taken_for_tokens():
    """Every path of this repository (its tests hold many fake tokens, none in a file name)."""
    root = ROOT
    paths = subprocess.run(
        ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(paths) > 100
    assert [p for p in paths if path_reason(p) == "secret_in_path"] == []


def test_ingest_skips_and_counts_it(make_repo):
    repo = make_repo("leaky")
    repo.write("app.py", "def handler():\n    return 'ok'\n")
    repo.write(f"notes/{HF}.md", "# Notes\n\nNothing secret inside.\n")
    repo.commit("notes")
    core = Core.from_settings(Settings(), FileConfig())
    report = core.index_repo(str(repo.path), name="leaky")
    assert report.skipped.get("secret_in_path") == 1
    assert set(core.index.manifest("leaky")) == {"app.py"}
    hits = core.search("notes nothing secret", CLI, top_k=5)
    assert all(HF not in h.chunk.path for h in hits)
    core.close()
