"""A maintained rule set under codecite's own rules: Kingfisher's built-in rules.

`kingfisher-secret-scanner` (MongoDB's Kingfisher, a Rust engine in process,
no network when scanning) ships the Betterleaks rules and OSV-Scalibr's Veles
rules, about 490 provider formats kept current by their authors; a release
of the package brings new providers. Chosen by measurement
(`bench/secrets_index_eval.py`, issue 28): layered under codecite's rules it
kept the fewest planted secrets at no more look-alikes redacted than
codecite's rules alone, at about +8% ingest time; Betterleaks' binding kept
fewer but redacted more look-alikes and doubled ingest time; detect-secrets'
plugins redacted 9% of the look-alikes.

Its findings pass codecite's look-alike rules (placeholders, names, paths,
hashes) before they are redacted. The compiled rules are cached in a private
directory of the temporary folder, so each process builds them once per
machine (about 7 s) and loads them after (under a second). A scan that fails
is logged and leaves codecite's own rules to do the work.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bot.ingest.secrets.rules import Hit
from bot.ingest.secrets.values import has_placeholder_body, is_harmless, is_placeholder

if TYPE_CHECKING:
    import kingfisher_sdk

log = logging.getLogger(__name__)

_SHORTEST = 8  # shorter findings are fragments (a rule's optional group), not secrets
# Some rules scan a megabyte-long line for seconds (repeated key headers); no one writes one.
_HUGE_LINE = re.compile(r"[^\n]{65536}")


@functools.cache
def _scanner() -> kingfisher_sdk.Scanner:
    import kingfisher_sdk  # here: a process that never scrubs (search, status) never loads it

    cache = Path(tempfile.gettempdir()) / f"codecite-kingfisher-{os.getuid()}"
    try:
        cache.mkdir(mode=0o700, exist_ok=True)
        rules = kingfisher_sdk.Rules(cache_dir=cache)
    except (OSError, ValueError, RuntimeError):  # an unusable cache: compile without one
        rules = kingfisher_sdk.Rules(cache=False)
    return kingfisher_sdk.Scanner(rules)


def ruleset_hits(text: str) -> Iterator[Hit]:
    """Every occurrence of each secret the maintained rules find in `text`."""
    if _HUGE_LINE.search(text):
        return  # generated data, not a file people write: codecite's own rules read it alone
    try:
        findings = _scanner().scan(text)
    except (RuntimeError, TimeoutError, ValueError) as exc:
        log.warning("the maintained secret rules could not scan a file: %s", type(exc).__name__)
        return
    for finding in findings:
        secret = finding.secret
        if not finding.visible or not _redactable(secret):
            continue
        kind = finding.rule_id.rsplit(".", 1)[-1].rsplit("/", 1)[-1]
        at = text.find(secret)
        while at >= 0:
            yield Hit(at, at + len(secret), kind)
            at = text.find(secret, at + len(secret))


def _redactable(secret: str) -> bool:
    """Not a look-alike by codecite's rules, and on one line (key blocks have rules of ours)."""
    if len(secret) < _SHORTEST or "\n" in secret:
        return False
    return not (is_placeholder(secret) or has_placeholder_body(secret) or is_harmless(secret))
