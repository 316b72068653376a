"""The `codecite` command run as a user runs it: a child process with its own data directory."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def start_cli(
    home: Path, *args: str, extra_env: Mapping[str, str] | None = None, **popen: Any
) -> subprocess.Popen[str]:
    """`codecite` started as a child process with its own data directory (not waited for)."""
    env = {**os.environ, **(extra_env or {}), "CODECITE_HOME": str(home)}
    command = [sys.executable, "-m", "adapters.cli.main", *args]
    return subprocess.Popen(command, env=env, cwd=ROOT, text=True, **popen)


def run_cli(
    home: Path, *args: str, stdin: str | None = None, columns: int = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODECITE_HOME": str(home), "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
