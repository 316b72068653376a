"""Real trees to measure, copied into a scratch directory so both systems read the same files.

Tree specs (repeatable `--tree`):
  codecite          this repository's working tree (tracked + untracked, not ignored)
  stdlib            this machine's Python standard library (without site-packages)
  owner/name        an evaluation repository at its newest commit, from --clones
  NAME=PATH         any directory (a git work tree as `codecite`, else copied as is)

Indexing a git repository in place would let codecite read git objects while
the peer walks the work tree; a plain copy gives both the same input. Caches
(`__pycache__`), VCS data and virtualenvs are never copied.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sysconfig
from collections.abc import Sequence
from pathlib import Path

from bench.cases import find_clone, head_commit, materialise

DEFAULT_TREES = ("codecite", "stdlib")
_SKIP = frozenset({"__pycache__", ".git", ".venv", ".venv-bench", "site-packages", ".mypy_cache"})


def snapshot(spec: str, work: Path, clones: Path | None) -> tuple[str, Path]:
    """(name, directory) for one tree spec, materialised under `work`."""
    from bench.common import ROOT

    name, _, path = spec.rpartition("=")
    if not name and path == "codecite":
        return "codecite", _copy_worktree(ROOT, work / "codecite")
    if not name and path == "stdlib":
        return "stdlib", _copy_dir(Path(sysconfig.get_paths()["stdlib"]), work / "stdlib")
    if not name and "/" in path and not Path(path).exists():
        if clones is None:
            raise SystemExit(f"--clones is needed for {path}")
        clone = find_clone(clones, path)
        return path, materialise(clone, head_commit(clone), work / path.replace("/", "+"))
    source = Path(path).resolve()
    label = name or source.name
    if (source / ".git").exists():
        return label, _copy_worktree(source, work / label)
    return label, _copy_dir(source, work / label)


def tree_parser(description: str, epilog: str | None) -> argparse.ArgumentParser:
    """A bench script's parser with the tree options it shares with the others."""
    ap = argparse.ArgumentParser(
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=epilog,
    )
    ap.add_argument("--tree", action="append", default=[], help="tree spec (see bench/trees.py)")
    ap.add_argument("--clones", type=Path, help="local clones for owner/name trees")
    ap.add_argument("--cases", type=Path, action="append", default=[], help="real questions")
    return ap


def snapshots(specs: Sequence[str], work: Path, clones: Path | None) -> dict[str, Path]:
    return dict(snapshot(s, work, clones) for s in (specs or DEFAULT_TREES))


def _copy_worktree(repo: Path, dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    shutil.rmtree(dest, ignore_errors=True)
    for raw in listed:
        rel = raw.decode("utf-8", "surrogateescape")
        src = repo / rel
        if not rel or not src.is_file() or src.is_symlink() or _SKIP & set(Path(rel).parts):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return dest


def _copy_dir(source: Path, dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(
        source,
        dest,
        symlinks=True,
        ignore=lambda _d, names: [n for n in names if n in _SKIP or n.endswith(".pyc")],
    )
    return dest


def tree_stats(root: Path) -> dict[str, int]:
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    return {"files_on_disk": len(files), "bytes_on_disk": sum(p.stat().st_size for p in files)}


def warm(root: Path) -> None:
    """Read every file once so neither system pays for a cold page cache."""
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            p.read_bytes()
