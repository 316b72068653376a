"""Scrub secrets from file text before it is chunked, stored, embedded or shown to a model.

Three kinds of evidence, each cheap to rule out in a file that has no secret:

- provider formats (`providers.py`, `shapes.py`): tokens that announce
  themselves by prefix and shape (`glpat-`, `hf_`, `dop_v1_`, `xoxb-`,
  private key blocks, URLs with a password), wherever they appear;
- names (`keywords.py`): a value assigned to a secret-sounding name, quoted
  or not, in code, shell, Dockerfiles, env files, YAML, headers and flags;
- entropy (`scrubber.py`): long random values ending a line of a
  configuration file, except hashes, ids, paths and base64 data.

A redaction replaces the secret by `[REDACTED]` on its own line: line
numbers, and so every citation, stay exact.
"""

from bot.ingest.secrets.keys import KeyBlock, is_key_file, key_blocks
from bot.ingest.secrets.rules import Hit, RuleSet, TokenRule
from bot.ingest.secrets.scrubber import (
    REDACTED,
    TOKEN_RULES,
    ScrubResult,
    find_secrets,
    holds_token,
    scrub,
)
from bot.ingest.secrets.values import is_placeholder, shannon_entropy

__all__ = [
    "REDACTED",
    "TOKEN_RULES",
    "Hit",
    "KeyBlock",
    "RuleSet",
    "ScrubResult",
    "TokenRule",
    "find_secrets",
    "holds_token",
    "is_key_file",
    "is_placeholder",
    "key_blocks",
    "scrub",
    "shannon_entropy",
]
