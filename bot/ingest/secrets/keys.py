"""Private key blocks: which are real, where their key material is, and whether a file is one.

A block is real when its body is structurally valid base64 of a plausible
length (at least 60 characters: an Ed25519 key in PKCS #8 is 64), after its
armor headers (`Proc-Type:`, `DEK-Info:`, `Version:`) and a PGP checksum
line are set aside. `-----BEGIN PRIVATE KEY-----this is not a key-----END...`,
a body of `...` or `<your key here>` is documentation, not a key: it is left
as it is. A block may sit inside a string with escaped newlines (a service
account's JSON file): its body is then cut at the `\\n` escapes.
"""

from __future__ import annotations

import binascii
import re
from base64 import b64decode
from collections.abc import Iterator
from dataclasses import dataclass

from bot.ingest.secrets.rules import Hit

MIN_BODY = 60  # base64 characters in the smallest real key (Ed25519, PKCS #8: 64)
# Outside its key blocks, a key file holds at most a few short lines (a comment, a name).
_KEY_FILE_LINES = 2
_KEY_FILE_CHARS = 200

_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
_ESCAPED_NEWLINE = re.compile(r"\\n|\\r\\n")
_ARMOR_HEADER = re.compile(r"^[A-Za-z][A-Za-z-]*:")
_PGP_CHECKSUM = re.compile(r"^=[A-Za-z0-9+/]{4}$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_STRIP = " \t\r\"',|"


@dataclass(frozen=True, slots=True)
class KeyBlock:
    start: int  # the BEGIN line's first character
    end: int  # just past the END line
    body: int  # where the body starts (after the BEGIN line)
    close: int  # where the END line starts
    real: bool


def key_blocks(text: str, *, cut: bool = False) -> Iterator[KeyBlock]:
    """Each BEGIN ... END private key block of `text`, in order, real or not. `cut`: the
    text may stop inside a block (a diff excerpt at its line limit): a block left open
    runs to the end."""
    if "-----BEGIN" not in text:
        return
    unclosed: set[str] = set()  # labels with no END after some point: none after any later one
    done = 0
    for begin in _PEM_BEGIN.finditer(text):
        label = begin.group(1)
        if begin.start() < done or label in unclosed:
            continue
        end_line = f"-----END {label}-----"
        close = text.find(end_line, begin.end())
        if close < 0 and cut:
            body = text[begin.end() :]
            yield KeyBlock(begin.start(), len(text), begin.end(), len(text), _real_body(body))
            return
        if close < 0:
            unclosed.add(label)
            continue
        done = close + len(end_line)
        real = _real_body(text[begin.end() : close])
        yield KeyBlock(begin.start(), done, begin.end(), close, real)


def private_key_hits(text: str, *, cut: bool = False) -> Iterator[Hit]:
    """The body of each real private key block, one hit per line so no newline is redacted."""
    for block in key_blocks(text, cut=cut):
        if not block.real:
            continue
        at = block.body
        kind = "private_key"  # counted once per block: the further lines are its pieces
        for line in text[block.body : block.close].split("\n"):
            for hit in _line_hits(line, at, kind):
                kind = ""
                yield hit
            at += len(line) + 1


def is_key_file(text: str) -> bool:
    """A file that is a private key: a real block, and little else but its blocks."""
    rest: list[str] = []
    at = 0
    found = False
    for block in key_blocks(text):
        if block.real:
            found = True
            rest.append(text[at : block.start])
            at = block.end
    if not found:
        return False
    rest.append(text[at:])
    lines = [line.strip() for line in "".join(rest).splitlines() if line.strip()]
    return len(lines) <= _KEY_FILE_LINES and sum(map(len, lines)) <= _KEY_FILE_CHARS


def _real_body(body: str) -> bool:
    pieces = [p.strip(_STRIP) for p in _ESCAPED_NEWLINE.split(body.replace("\r", ""))]
    lines = [p for part in pieces for p in part.split("\n")]
    kept = [
        line.strip(_STRIP)
        for line in lines
        if line.strip(_STRIP)
        and not _ARMOR_HEADER.match(line.strip(_STRIP))
        and not _PGP_CHECKSUM.match(line.strip(_STRIP))
    ]
    joined = "".join(kept)
    if len(joined) < MIN_BODY or not _BASE64.match(joined):
        return False
    try:
        b64decode(joined + "=" * (-len(joined) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _line_hits(line: str, at: int, kind: str) -> Iterator[Hit]:
    """Hits for the key material on one physical line, skipping escapes and indentation."""
    cursor = 0
    for escape in [*_ESCAPED_NEWLINE.finditer(line), None]:
        stop = len(line) if escape is None else escape.start()
        segment = line[cursor:stop]
        stripped = segment.strip(_STRIP)
        if stripped:
            offset = cursor + segment.index(stripped)
            yield Hit(at + offset, at + offset + len(stripped), kind)
        if escape is not None:
            cursor = escape.end()
