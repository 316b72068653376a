"""Reproducible installs (issue 27, item 1): one resolution, uv.lock, read by the Python
buildpack, and its hash-pinned exports in requirements/, read by pip (scripts/install.sh).

The buildpack's rules, as its published source states them (heroku/heroku-buildpack-python,
lib/package_manager.sh, lib/python_version.sh, lib/uv.sh): exactly one package manager file at
the top level, among requirements.txt, Pipfile(.lock), poetry.lock and uv.lock, or the build
stops ("Multiple Python package manager files were found"); with uv.lock a .python-version
is required; runtime.txt is deprecated; it installs with `uv sync --locked
--no-default-groups`, which fails when uv.lock is out of step with pyproject.toml. That last
rule is `make lockcheck` (part of `make test`), tested here on a stale copy too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.support.paths import ROOT

PACKAGE_MANAGER_FILES = ("requirements.txt", "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock")
SETS = ("app", "dev", "bench", "uv")
LOCK_VENV = ROOT / ".venv-lock"


def pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)


def lock() -> dict[str, Any]:
    with (ROOT / "uv.lock").open("rb") as handle:
        return tomllib.load(handle)


def pins(name: str) -> dict[str, tuple[str, list[str]]]:
    """requirements/NAME.txt: package -> (its marker, its hashes), for every pinned line."""
    text = (ROOT / "requirements" / f"{name}.txt").read_text(encoding="utf-8")
    found: dict[str, tuple[str, list[str]]] = {}
    for entry in re.sub(r"\\\n\s*", " ", text).splitlines():
        if not entry.strip() or entry.lstrip().startswith("#"):
            continue
        spec, *options = entry.split(" --hash=")
        requirement = Requirement(spec.strip())
        [pin] = list(requirement.specifier)
        assert pin.operator == "==", entry
        found.setdefault(canonicalize_name(requirement.name), (str(requirement.marker or ""), []))[
            1
        ].extend(o.split()[0] for o in options)
    return found


def test_uv_lock_is_the_only_package_manager_file_at_the_top() -> None:
    present = [name for name in PACKAGE_MANAGER_FILES if (ROOT / name).exists()]
    assert present == ["uv.lock"]
    assert not (ROOT / "runtime.txt").exists()  # deprecated; .python-version says it
    assert (ROOT / "Procfile").is_file()


def test_python_version_names_a_python_the_project_supports() -> None:
    version = (ROOT / ".python-version").read_text(encoding="utf-8").strip()
    assert re.fullmatch(r"3\.\d+", version), version  # major.minor: security updates apply
    requires = pyproject()["project"]["requires-python"]
    assert SpecifierSet(requires).contains(f"{version}.0")
    assert lock()["requires-python"] == requires


def test_the_lock_files_are_committed_not_ignored() -> None:
    names = ["uv.lock", ".python-version", *(f"requirements/{s}.txt" for s in SETS)]
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", *names], capture_output=True, text=True
    )
    assert ignored.stdout == "", ignored.stdout


def test_the_project_is_locked_as_itself_with_its_groups() -> None:
    [root] = [p for p in lock()["package"] if p["name"] == "codecite"]
    assert root["source"] == {"editable": "."}  # `uv sync` installs codecite too
    groups = pyproject()["dependency-groups"]
    assert sorted(groups) == ["build", "lock"]  # neither is a default group (`dev`)


def test_every_pin_is_hash_checked() -> None:
    for name in SETS:
        for package, (_, hashes) in pins(name).items():
            assert hashes and all(h.startswith("sha256:") for h in hashes), (name, package)


def test_the_app_set_is_pyprojects_dependencies_and_the_build_tool_only() -> None:
    app = pins("app")
    listed = {
        canonicalize_name(Requirement(r).name) for r in pyproject()["project"]["dependencies"]
    }
    assert listed <= set(app)
    assert "setuptools" in app and "uv" not in app
    dev = {
        canonicalize_name(Requirement(r).name)
        for r in pyproject()["project"]["optional-dependencies"]["dev"]
    }
    assert not dev & set(app)  # pytest, mypy, ruff stay out of the image
    assert dev <= set(pins("dev")) and set(app) <= set(pins("dev"))
    assert set(pins("uv")) == {"uv"}


def test_the_lock_tool_is_the_uv_the_buildpack_runs() -> None:
    """The uv that writes uv.lock is the buildpack's (requirements/uv.txt in its source), so
    the lock is never in a format newer than the one that reads it."""
    [spec] = pyproject()["dependency-groups"]["lock"]
    assert Requirement(spec).specifier == SpecifierSet("==0.12.5")


# -- the check in `make test` ----------------------------------------------------------------


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """What the lock check reads, copied: pyproject.toml, README.md, the lock and the script."""
    if not (LOCK_VENV / "bin" / "uv").exists():
        pytest.skip("the lock tool is not installed: `make unit` (or `make lockcheck`) does it")
    copy = tmp_path / "checkout"
    for name in ("pyproject.toml", "README.md", "uv.lock", ".python-version"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "requirements", copy / "requirements")
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    return copy


def check(checkout: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "scripts/lock.sh", "check"],
        cwd=checkout,
        # No cache of uv's and no index: the check reads the lock alone.
        env={
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PYTHON": sys.executable,
            "LOCK_VENV": str(LOCK_VENV),
            "HOME": str(checkout),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_check_passes_on_the_lock_as_committed(checkout: Path) -> None:
    done = check(checkout)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_dependency_added_without_make_lock_fails_the_check(checkout: Path) -> None:
    """What merging a branch that adds a dependency looks like until `make lock` runs."""
    project = checkout / "pyproject.toml"
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace('"rich>=13",', '"rich>=13",\n  "prometheus-client>=0.20",'))
    done = check(checkout)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "uv.lock is out of step with pyproject.toml: run `make lock` and commit the result"
    ]


def test_a_changed_bound_fails_the_check_even_when_the_pin_still_fits(checkout: Path) -> None:
    project = checkout / "pyproject.toml"
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace('"rich>=13"', '"rich>=13.1"'))
    assert check(checkout).returncode == 1


def test_a_hand_edited_export_fails_the_check(checkout: Path) -> None:
    exported = checkout / "requirements" / "app.txt"
    text = exported.read_text(encoding="utf-8")
    [pinned] = re.findall(r"^rich==[^ ]+", text, flags=re.M)
    exported.write_text(text.replace(pinned, "rich==13.0.0"))  # bumped by hand, hashes kept
    done = check(checkout)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "requirements/app.txt is out of step with uv.lock: run `make lock` and commit the result"
    ]
