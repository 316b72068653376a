"""bot.code is below ingest and symbols: they use it, it never imports them."""

from __future__ import annotations

import ast
from pathlib import Path

import bot.code

CODE = Path(bot.code.__file__).resolve().parent
# What bot.code may import from the project: itself and the shared values.
ALLOWED = ("bot.code", "bot.models")


def project_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.split(".")[0] in ("bot", "adapters")}


def test_bot_code_imports_only_itself_and_the_models() -> None:
    modules = sorted(CODE.rglob("*.py"))
    assert len(modules) > 15
    outside = {
        f"{path.relative_to(CODE)}: {name}"
        for path in modules
        for name in project_imports(path)
        if not name.startswith(ALLOWED)
    }
    assert outside == set()
