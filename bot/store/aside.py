"""Damaged files set aside: renamed `NAME.damaged-<UTC time>`, one sentence for the user.

Any file a store keeps (SQLite or not) goes through `set_aside`; `notices()`
lists what this process set aside, and what other processes did in the last
week (found by their names beside the stores), for the `status` command.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

log = logging.getLogger(__name__)

_SIDECARS = ("-wal", "-shm", "-journal")
_KEEP_NOTICES = 50
_ASIDE = ".damaged-"
_STAMP = "%Y%m%dT%H%M%S.%fZ"
RECENT = timedelta(days=7)  # how long `status` mentions a file set aside


@dataclass(frozen=True, slots=True)
class SetAside:
    """One damaged file set aside, and the sentence that tells a user."""

    what: str  # "run log"
    path: Path
    kept: Path
    at: datetime
    remedy: str = ""  # e.g. "the next reindex refills it"

    def sentence(self) -> str:
        then = f"; {self.remedy}" if self.remedy else ""
        return (
            f"The {self.what} was damaged and has been started afresh "
            f"(kept as {self.kept.name}){then}."
        )


_notices: list[SetAside] = []
_notices_lock = threading.Lock()


_described: dict[str, tuple[str, str]] = {}  # file name -> (what, remedy), as stores say


def describe(name: str, what: str, remedy: str = "") -> None:
    """How to speak of the file `name` when another process is found to have set it aside."""
    with _notices_lock:
        _described[name] = (what, remedy)


def notices(folders: Iterable[Path] = (), *, within: timedelta = RECENT) -> list[SetAside]:
    """The files set aside in `folders`, by this process or (found on disk) by any other in
    the last `within`; oldest first. No folders: what this process set aside anywhere."""
    places = {folder.resolve() for folder in folders}
    with _notices_lock:
        found = {n.kept: n for n in _notices if not places or n.kept.parent.resolve() in places}
        described = dict(_described)
    since = datetime.now(UTC) - within
    for folder in dict.fromkeys(folders):
        for kept in folder.glob(f"*{_ASIDE}*"):
            notice = _on_disk(kept, described)
            if notice is not None and notice.at >= since:
                found.setdefault(kept, notice)
    return sorted(found.values(), key=lambda n: n.at)


def _on_disk(kept: Path, described: dict[str, tuple[str, str]]) -> SetAside | None:
    name, _, stamp = kept.name.rpartition(_ASIDE)
    try:
        at = datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None
    what, remedy = described.get(name, (f"file {name}", ""))
    return SetAside(what, kept.with_name(name), kept, at, remedy)


def _remember(notice: SetAside) -> None:
    with _notices_lock:
        _notices.append(notice)
        del _notices[:-_KEEP_NOTICES]


def set_aside(path: Path, what: str, remedy: str = "") -> SetAside:
    """Rename a damaged file `NAME.damaged-<UTC time>` (sidecars removed), warn once, and
    remember it for `notices()`. Any kept file, not only SQLite, may go through here."""
    now = datetime.now(UTC)
    describe(path.name, what, remedy)
    kept = path.with_name(f"{path.name}{_ASIDE}{now.strftime(_STAMP)}")
    path.replace(kept)
    for sidecar in _SIDECARS:
        Path(f"{path}{sidecar}").unlink(missing_ok=True)
    notice = SetAside(what, path, kept, now, remedy)
    _remember(notice)
    log.warning("%s", notice.sentence())
    return notice
