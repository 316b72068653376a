"""A full disk (issue 12, item 5): one clear line, nothing set aside, the index still answers.

The data directory lives on a small tmpfs mounted for the test (root only);
elsewhere the test is skipped and says why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.errors import DiskFullError
from tests.support.cli import run_cli
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop

ROOT = Path(__file__).resolve().parents[2]
FULL = "The disk holding codecite's data directory is full; free some space and try again."
QUESTION = "where do we retry failed webhooks?"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs, unmounted afterwards whatever happens."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(folder: Path) -> Path:
    """Write until the disk says no more; the filler's path, to free the space again."""
    filler = folder / f"filler-{uuid.uuid4().hex[:6]}"
    with filler.open("wb", buffering=0) as out:  # unbuffered: closing it has nothing to write
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    for n in range(1000):  # the last few kilobytes, in smaller pieces
        try:
            (folder / f"crumb-{n}").write_bytes(b"\0" * 4096)
        except OSError:
            break
    return filler


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(home, *args, columns=200)


def test_a_full_disk_is_one_line_and_the_index_still_answers(
    small_disk: Path, tmp_path: Path
) -> None:
    shop = GitRepo(tmp_path / "shop")  # the source lives elsewhere; only the data is full
    build_shop(shop)
    home = small_disk / "home"
    core = Core.from_settings(Settings(CODECITE_HOME=home), FileConfig())  # type: ignore[call-arg]
    try:
        core.index_repo(str(shop.path), name="shop")
        before = core.ask(QUESTION, CLI)
        assert any(c.path == "shop/webhooks.py" for c in before.citations)
        big = "\n".join(f"def handler_{n}(event):\n    return {n}\n" for n in range(1500))
        shop.write("shop/handlers.py", big)  # a change the next reindex must write
        shop.commit("many handlers")
        for sidecar in home.glob("*"):  # leave the files open here, as a server would
            assert sidecar.exists()
        filler = fill(small_disk)

        with pytest.raises(DiskFullError) as raised:
            core.index_repo(str(shop.path), name="shop")
        assert raised.value.user_message == FULL
        with pytest.raises(DiskFullError) as queued:  # not even its job can be recorded
            core.run_command("reindex shop", CLI)
        assert queued.value.user_message == FULL
        text = core.reindex("shop", CLI, inline=True).result(timeout=60)  # the terminal's
        assert text == f"• shop: failed: {FULL}"
        assert "incident" not in text

        after = core.ask(QUESTION, CLI)  # the earlier index still answers
        assert after.text == before.text and after.citations == before.citations
        assert not list(home.rglob("*.damaged-*")), "a full disk is not damage"

        result = cli(home, "reindex")  # another process, as the user runs it
        everything = result.stdout + result.stderr
        assert "Traceback" not in everything and "incident" not in everything, everything
        assert FULL in everything
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert errors in ([], [f"error: {FULL}"]), result.stderr

        filler.unlink()
        for crumb in small_disk.glob("crumb-*"):
            crumb.unlink()
        report = core.index_repo(str(shop.path), name="shop")  # space again: it goes on
        assert report.commit == shop.head()
    finally:
        core.close()
    status = cli(home, "status")
    assert status.returncode == 0, status.stderr
    assert f"shop main@{shop.head()[:7]}" in status.stdout
    assert not list(home.rglob("*.damaged-*"))
    shutil.rmtree(home, ignore_errors=True)
