"""The tree keeps the shape the design gives it: small modules, tests that mirror the packages."""

from __future__ import annotations

import ast

import pytest

from tests.support.paths import ROOT

MAX_MODULE_LINES = 400
PACKAGES = ("bot", "adapters")


def _modules() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.parametrize("module", _modules())
def test_every_module_stays_small(module):
    lines = (ROOT / module).read_text(encoding="utf-8").count("\n")
    assert lines < MAX_MODULE_LINES, f"{module} has {lines} lines; split it by job"


def _imported_test_modules(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    ]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    leaves = [name for name in names if name.startswith("tests.")]
    return [n for n in leaves if n.rsplit(".", 1)[-1].startswith(("test_", "conftest"))]


def test_no_test_module_imports_another():
    offenders = {
        str(p.relative_to(ROOT)): found
        for p in sorted((ROOT / "tests").rglob("*.py"))
        if "fixtures" not in p.parts and (found := _imported_test_modules(p))
    }
    assert offenders == {}, "shared helpers belong in tests/support/"


def test_test_folders_mirror_the_packages():
    strays = []
    for pkg in PACKAGES:
        for folder in sorted((ROOT / "tests" / pkg).rglob("*")):
            if (folder / "__init__.py").is_file():  # a test package, not a data folder
                source = ROOT / folder.relative_to(ROOT / "tests")
                if not (source / "__init__.py").is_file():
                    strays.append(str(folder.relative_to(ROOT)))
    assert strays == [], "a test folder under tests/bot or tests/adapters names a package"
