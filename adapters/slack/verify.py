"""Slack request signatures, checked before Bolt sees a request.

Slack signs `v0:{timestamp}:{raw body}` with HMAC-SHA256 and the app's signing
secret (https://api.slack.com/authentication/verifying-requests-from-slack).
The timestamp and the signature's shape are judged from the headers alone, so a
request that fails them is refused without reading its body; only a well-formed,
fresh request is read and hashed. Nothing of a refused body is logged: at most
its size and a short hash (`adapters.common.http_limits.describe_body`).

Bolt verifies again (same secret, same text); when it disagrees (a timestamp
crossing the 5-minute line between the two checks) its log line would carry the
whole body at INFO, so `withhold_bolt_body_log` rewrites that line.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time

MAX_CLOCK_SKEW = 5 * 60  # seconds either way, as Slack and Bolt allow
BOLT_VERIFICATION_LOGGER = "slack_bolt.RequestVerification"

_TIMESTAMP = re.compile(r"[0-9]{1,12}")  # Unix seconds; no sign, no exponent, no spaces
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


def header_refusal(
    timestamp: str | None, signature: str | None, *, now: float | None = None
) -> str | None:
    """Why the signing headers alone condemn a request, or None when the body is worth reading."""
    if timestamp is None:
        return "missing timestamp"
    if not _TIMESTAMP.fullmatch(timestamp):
        return "malformed timestamp"
    clock = time.time() if now is None else now
    if abs(clock - int(timestamp)) > MAX_CLOCK_SKEW:
        return "stale timestamp"
    if signature is None:
        return "missing signature"
    if not _SIGNATURE.fullmatch(signature):
        return "malformed signature"
    return None


def signature_matches(secret: bytes, timestamp: str, body: bytes, signature: str) -> bool:
    expected = hmac.new(secret, b"v0:" + timestamp.encode("ascii") + b":" + body, hashlib.sha256)
    return hmac.compare_digest("v0=" + expected.hexdigest(), signature)


class _WithholdBody(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = "Bolt refused a request signature (headers and body withheld)"
        record.args = None
        return True


def withhold_bolt_body_log() -> None:
    """Rewrite Bolt's "Invalid request signature detected (... body: ...)" line. Idempotent."""
    logger = logging.getLogger(BOLT_VERIFICATION_LOGGER)
    if not any(isinstance(f, _WithholdBody) for f in logger.filters):
        logger.addFilter(_WithholdBody())
