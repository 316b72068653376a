"""Offline token estimates for code and prose, and truncation to a token budget.

No tokenizer files are downloaded (tiktoken fetches its encodings at first use,
which fails on air-gapped machines). The estimate is calibrated to err high for
BPE tokenizers of the cl100k/o200k family, because every caller uses it to stay
*under* a limit (a prompt budget, the embeddings API's per-input and
per-request caps):

- a run of ASCII letters: one token per 5 letters, at least one;
- a run of digits: one token per 3 digits (these tokenizers split numbers so);
- a run of punctuation: about 0.7 tokens a character (common pairs such as
  `()`, `->`, `):` merge, most others do not);
- whitespace: a lone space merges into the next word; any longer run, or one
  holding a newline, costs one token;
- any other character: one token per 2 UTF-8 bytes (CJK is about 1-2 tokens
  a character, emoji more);

and the total is never below ceil(characters / 4), the usual rule for prose.
Every piece is non-decreasing as text grows, so the count of a prefix never
exceeds the count of the whole; truncation relies on that.
"""

from __future__ import annotations

import math
import re

_PIECE = re.compile(
    r"(?P<alpha>[A-Za-z]+)"
    r"|(?P<digit>[0-9]+)"
    r"|(?P<space>\s+)"
    r"|(?P<punct>[!-/:-@\[-`{-~]+)"
    r"|(?P<other>[^\x00-\x7f]+)"
    r"|(?P<ctrl>[\x00-\x1f\x7f]+)"
)


def count_tokens(text: str) -> int:
    """Estimated number of tokens in `text` (0 for the empty string)."""
    if not text:
        return 0
    total = 0
    for match in _PIECE.finditer(text):
        kind = match.lastgroup
        piece = match.group()
        if kind == "alpha":
            total += math.ceil(len(piece) / 5)
        elif kind == "digit":
            total += math.ceil(len(piece) / 3)
        elif kind == "space":
            total += 0 if piece == " " else 1
        elif kind == "punct":
            total += math.ceil(len(piece) * 0.7)
        elif kind == "other":
            total += math.ceil(len(piece.encode("utf-8", "replace")) / 2)
        else:
            total += len(piece)
    return max(total, math.ceil(len(text) / 4))


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` estimated at no more than `max_tokens` tokens.

    When the cut falls mid-line and a line break lies in the last tenth of the
    prefix, the prefix ends at that break instead, so code is not cut mid-statement.
    """
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text
    # No prefix longer than 4 * max_tokens characters fits (the chars/4 floor), which
    # bounds the search however long the text is.
    lo, hi = 0, min(len(text), 4 * max_tokens + 1)  # count(text[:lo]) <= max < count(text[:hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid
    prefix = text[:lo]
    newline = prefix.rfind("\n")
    if newline >= 0 and newline >= lo - max(1, lo // 10):
        return prefix[: newline + 1]
    return prefix
