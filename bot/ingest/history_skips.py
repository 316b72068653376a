"""What the history leaves undiffed: files the index never keeps, lines no chunk needs.

Two savings, both measured on a first ingest (bench/history.py):
  - git prints no patch for files the index skips by name (lockfiles, binaries,
    generated code): a gitattributes file given as `core.attributesFile` unsets their
    `diff` attribute, so git reports "Binary files differ" without reading or diffing the
    blobs. Lockfiles alone were 45% of flask's 1,000-commit patch. The commit still names
    them among its touched paths; only their line ranges go unrecorded.
  - line states are carried only for the files the index holds at the head and the
    paths their lines came from (renames, followed back through the commits), since only
    indexed chunks ask who changed their lines.
The attribute patterns are a subset of `filters.path_reason`'s skips, so no file the
index keeps is ever taken for binary (a repository's own .gitattributes still wins).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from bot.ingest.filters import BINARY_EXTENSIONS, GENERATED_SUFFIXES, LOCKFILES
from bot.ingest.history_log import RawCommit

log = logging.getLogger(__name__)


@cache
def attributes_text() -> str:
    """gitattributes lines: no textual diff for the files the index skips by name."""
    patterns = [*sorted(LOCKFILES), *(f"*.{ext}" for ext in sorted(BINARY_EXTENSIONS))]
    patterns += [f"*{suffix}" for suffix in GENERATED_SUFFIXES]
    patterns += ["*.min.*", "*.generated.*"]
    return "".join(f"{p} -diff\n" for p in patterns)


@contextmanager
def undiffed_skips() -> Iterator[tuple[str, ...]]:
    """git options that apply `attributes_text` to one command, while the file exists;
    none when it cannot be written (a full disk): git then diffs those files too."""
    try:
        handle, name = tempfile.mkstemp(prefix="codecite-attributes-", text=True)
    except OSError as exc:
        log.info("history diffs every file: no attributes file (%s)", exc.strerror)
        yield ()
        return
    try:
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(attributes_text())
            config: tuple[str, ...] = ("-c", f"core.attributesFile={name}")
        except OSError as exc:
            log.info("history diffs every file: no attributes file (%s)", exc.strerror)
            config = ()
        yield config
    finally:
        Path(name).unlink(missing_ok=True)


def lines_needed(commits: Sequence[RawCommit], kept: Collection[str]) -> frozenset[str]:
    """`kept` (the head's indexed paths) and every path their lines were renamed from,
    through `commits` (parents first): the files whose line states matter."""
    needed = set(kept)
    for commit in reversed(commits):
        for diff in commit.diffs:
            if diff.old_path and diff.new_path in needed:
                needed.add(diff.old_path)
    return frozenset(needed)
