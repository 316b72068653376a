"""The hashes of command lists last registered with a platform, in one small JSON file
(`CODECITE_HOME/<name>.json`, e.g. `discord-commands.json`), written atomically.

Losing it costs one registration more, never an error: a file that cannot be read
as JSON is set aside (`bot.store.aside`) and everything is registered again; a
write that fails (a full disk) is logged.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path

from bot.store.aside import set_aside

log = logging.getLogger(__name__)


class JsonCommandHashes:
    """`get(application)` / `set(application, hashes)`; one application's hashes a file."""

    def __init__(self, path: Path, what: str = "command list", remedy: str = "") -> None:
        self.path = path
        self._what = what
        self._remedy = remedy or "commands are registered again"
        self._lock = threading.Lock()

    def get(self, application: str) -> dict[str, str]:
        with self._lock:
            data = self._read()
        if not isinstance(data, dict) or data.get("application_id") != application:
            return {}  # another application (or none yet): everything is registered afresh
        hashes = data.get("hashes", {})
        return {str(k): str(v) for k, v in hashes.items()} if isinstance(hashes, dict) else {}

    def set(self, application: str, hashes: Mapping[str, str]) -> None:
        body = {"application_id": application, "hashes": dict(sorted(hashes.items()))}
        tmp = self.path.with_suffix(".tmp")
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_text(json.dumps(body, indent=1), encoding="utf-8")
                tmp.replace(self.path)  # atomic: a crash never leaves half a file
            except OSError as exc:  # e.g. a full disk: the next start registers again
                log.warning("%s not saved to %s: %s", self._what, self.path, exc)
                tmp.unlink(missing_ok=True)

    def close(self) -> None:
        """Nothing stays open between calls."""

    def _read(self) -> object:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # not JSON (or not UTF-8): kept aside, every target again
            set_aside(self.path, self._what, self._remedy)
            return None
        except OSError as exc:
            log.warning("ignoring unreadable %s %s: %s", self._what, self.path, exc)
            return None
