"""Where the checkout and the shared test fixtures are, for tests at any depth."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POLYGLOT = ROOT / "tests" / "fixtures" / "polyglot"
