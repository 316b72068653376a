"""Fresh values from the formats in `formats.txt`, drawn from a seed.

`formats()` reads the table; `value(fmt, rng)` draws one value and the parts
of it that must not survive indexing (the whole value, or for a URL or a
connection string only its generated parts). The same seed gives the same
corpus on every machine; no value is a working credential.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from dataclasses import dataclass
from pathlib import Path

FORMATS = Path(__file__).with_name("formats.txt")

CLASSES = {
    "B62": string.ascii_letters + string.digits,
    "B64": string.ascii_letters + string.digits + "+/",
    "B64U": string.ascii_letters + string.digits + "_-",
    "HEX": "0123456789abcdef",
    "HEXU": "0123456789ABCDEF",
    "UPNUM": string.ascii_uppercase + string.digits,
    "LOWNUM": string.ascii_lowercase + string.digits,
    "DIG": string.digits,
    "ALPHA": string.ascii_letters,
    "LOWER": string.ascii_lowercase,
    "B32L": "abcdefghijklmnopqrstuvwxyz234567",
    "B58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
    "BECH32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    # Django's get_random_secret_key alphabet; WordPress's salt generator's; a typed password's.
    "DJ": string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)",
    "WPKEY": string.ascii_letters + string.digits + "!@#%^&*()-_[]{}<>~+=,.;:/?|",
    "PW": string.ascii_letters + string.digits + "!#%*-_@^",
}
_PART = re.compile(r"\{([A-Z0-9]+)(?::([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class Format:
    provider: str
    kind: str
    name: str  # the variable name people give it
    spec: str
    source: str
    url: bool  # a URL or connection string: only the generated parts are secret

    @property
    def shape(self) -> str:
        """prefixed | unprefixed | hex_uuid | short | url | private_key | jwt."""
        if self.url:
            return "url"
        if self.spec.startswith("{PEM"):
            return "private_key"
        if self.spec == "{JWT}":
            return "jwt"
        lead = self.spec.split("{", 1)[0]
        if len(lead) >= 3 or (len(lead) == 2 and lead.isalpha()):
            return "prefixed"
        body = _PART.findall(self.spec)
        if all(c in ("HEX", "HEXU", "UUID") for c, _ in body):
            return "hex_uuid"
        return "short" if _length(self.spec) < 16 else "unprefixed"


def formats() -> list[Format]:
    out = []
    for line in FORMATS.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.split(" | ")]
        provider, kind, name, *spec, source = cells
        url = name.endswith("*")
        out.append(Format(provider, kind, name.rstrip("*"), " | ".join(spec), source, url))
    return out


def value(fmt: Format, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A fresh value of `fmt` and its secret parts."""
    parts: list[str] = []
    pieces: list[str] = []
    at = 0
    for match in _PART.finditer(fmt.spec):
        pieces.append(fmt.spec[at : match.start()])
        drawn = _draw(match.group(1), match.group(2) or "", rng)
        pieces.append(drawn)
        parts.append(drawn)
        at = match.end()
    pieces.append(fmt.spec[at:])
    whole = "".join(pieces)
    if fmt.url:  # ids and hosts are not secret; a webhook of short parts (Zapier's) is
        long = tuple(p for p in parts if len(p) >= 12)
        return whole, long or tuple(p for p in parts if len(p) >= 6)
    return whole, (whole,)


def _draw(cls: str, arg: str, rng: random.Random) -> str:
    if cls == "UUID":
        h = _chars(rng, "HEX", 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"
    if cls == "JWT":
        return _jwt(rng)
    if cls == "PEM":
        label, lines = arg.rsplit(":", 1)
        return _pem(rng, label, int(lines))
    low, _, high = arg.partition("-")
    n = rng.randint(int(low), int(high)) if high else int(low)
    return _chars(rng, cls, n)


def _chars(rng: random.Random, cls: str, n: int) -> str:
    return "".join(rng.choices(CLASSES[cls], k=n))


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    claims = {
        "sub": _chars(rng, "LOWNUM", 12),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "role": rng.choice(["service_role", "admin", "deploy", "api"]),
        "jti": _chars(rng, "HEX", 16),
    }
    head = _b64url({"alg": rng.choice(["HS256", "RS256", "EdDSA"]), "typ": "JWT"})
    return f"{head}.{_b64url(claims)}.{_chars(rng, 'B64U', 43)}"


def _pem(rng: random.Random, label: str, lines: int) -> str:
    """A key block whose body is base64 of DER-shaped random bytes (64 characters a line)."""
    size = lines * 48
    head = b"openssh-key-v1\0" if "OPENSSH" in label else bytes([0x30, 0x82, size >> 8, size & 255])
    raw = head + rng.randbytes(size - len(head))
    body = base64.b64encode(raw).decode()
    rows = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *rows, f"-----END {label}-----"])


def _length(spec: str) -> int:
    total = len(_PART.sub("", spec))
    for cls, arg in _PART.findall(spec):
        if cls == "UUID":
            total += 36
        elif arg and arg[0].isdigit():
            total += int(arg.partition("-")[0])
    return total
