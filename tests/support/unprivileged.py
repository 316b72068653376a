"""Files this test's child processes may not read, as a container user meets a mounted checkout.

Root reads everything, and the suite often runs as root. So, as root, a denied path is given to
a stranger (uid 65534, mode 0700) and the child runs without the two capabilities that
override file permissions (`setpriv`, util-linux); as anyone else, the path is simply made
mode 0000. Either way the kernel refuses the child exactly as it refuses `codecite` inside a
container whose user owns nothing on the mount.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

STRANGER = 65534  # `nobody` on Debian: owns nothing the test made
_CAPS = "-dac_override,-dac_read_search"


class Denials:
    """Paths made unreadable during a test; their modes come back afterwards (so the
    temporary directory can be removed by a user who is not root)."""

    def __init__(self) -> None:
        self._saved: list[tuple[Path, int]] = []

    def deny(self, path: Path) -> Path:
        self._saved.append((path, path.stat().st_mode & 0o7777))
        if os.geteuid() == 0:
            os.chown(path, STRANGER, STRANGER)
            path.chmod(0o700)
        else:
            path.chmod(0o000)
        return path

    def restore(self) -> None:
        for path, mode in reversed(self._saved):
            path.chmod(mode)


def give_away(root: Path) -> None:
    """Hand `root` and everything under it to the stranger, modes unchanged (root only)."""
    if os.geteuid() != 0:
        pytest.skip("only root can give files to another user")
    for path in [root, *root.rglob("*")]:
        os.lchown(path, STRANGER, STRANGER)


def unprivileged(argv: Sequence[str]) -> list[str]:
    """`argv` run so that file permissions apply to it (as root: without DAC overrides)."""
    if os.geteuid() != 0:
        return list(argv)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("setpriv (util-linux) is needed to run a child without root's overrides")
    return [setpriv, f"--inh-caps={_CAPS}", f"--bounding-set={_CAPS}", "--", *argv]


@pytest.fixture
def denials() -> Iterator[Denials]:
    made = Denials()
    try:
        yield made
    finally:
        made.restore()
