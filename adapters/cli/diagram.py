"""`codecite map --diagram [FILE]`: the architecture diagram as a PNG file or Mermaid text.

No FILE (or `-`) prints the Mermaid source on stdout; `.png` writes the picture;
`.mmd`, `.mermaid` or `.md` write the Mermaid source (fenced, for `.md`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bot.errors import BotError
from bot.models import Answer, Attachment

TEXT_SUFFIXES = (".mmd", ".mermaid", ".md")


def write_diagram(answer: Answer, target: str) -> None:
    """Write or print the answer's diagram; BotError with one line for what cannot be done."""
    drawn = [a for a in answer.attachments if a.mime == "image/png"]
    if not drawn:
        raise BotError("No diagram to draw: no indexed repository here has code in parts.")
    if target == "-":
        sys.stdout.write("\n\n".join(a.alt_text for a in drawn) + "\n")
        return
    if len(drawn) > 1:
        raise BotError(
            "Several repositories are mapped; name one: codecite map REPO --diagram FILE"
        )
    path = Path(target)
    suffix = path.suffix.lower()
    if suffix not in (".png", *TEXT_SUFFIXES):
        raise BotError(f"Give the diagram a .png, .mmd or .md name, not {path.name!r}.")
    _write(path, _content(drawn[0], suffix))
    sys.stderr.write(f"Wrote {drawn[0].title.lower()} to {path}\n")


def _content(diagram: Attachment, suffix: str) -> bytes:
    if suffix == ".png":
        return diagram.data
    text = diagram.alt_text
    if suffix == ".md":
        text = f"```mermaid\n{text}\n```"
    return (text + "\n").encode("utf-8")


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise BotError(f"Could not write the diagram to {path}: {reason}.") from exc
