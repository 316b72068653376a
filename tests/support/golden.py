"""Golden files: compare a rendering with the file, print a unified diff when they differ.

`UPDATE_GOLDEN=1 pytest ...` writes the rendering instead (check the change by eye first).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path


def check_golden(path: Path, actual: str, what: str) -> None:
    """Fail with a readable diff unless `actual` is what `path` holds (`what` changed)."""
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            f"golden/{path.name}",
            "actual",
        )
        raise AssertionError(f"{what} changed (UPDATE_GOLDEN=1 to accept):\n" + "".join(diff))
