"""Documents' token counts as flat arrays of term hashes, counts and field numbers.

The counting half of `bot.index.local.termcounts`, without numpy: ingest's
worker processes count here and send the arrays back, and the writing process
packs them into the stored records (about 19 MB less memory in each worker, and
no numpy import at its start). A term is the stable 64-bit BLAKE2b hash of a
token from `bot.text.tokens`.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from bot.text.tokens import path_tokens, token_counts

_FIELD_BYTE = [bytes([n]) for n in range(256)]

# What a chunk's term counts depend on: (path, symbol, header, text). Plain tuples, so a
# batch of them pickles fast for a worker process.
ChunkText = tuple[str, str, str, str]


class _HashCache(dict[str, int]):
    """token -> hash, computed once; a plain dict lookup is the hot path of indexing."""

    # A larger vocabulary starts over rather than grow: 50,000 tokens (about 5 MB) cost the
    # standard library's ingest 1% more tokenising than a million and 13 MB less memory.
    LIMIT = 50_000

    def __missing__(self, token: str) -> int:
        if len(self) >= self.LIMIT:
            self.clear()
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = self[token] = int.from_bytes(digest, "little")
        return value


_HASHES = _HashCache()
_hash_of = _HASHES.__getitem__


def term_hash(token: str) -> int:
    """The stable 64-bit id of a token (the same in every process and version)."""
    return _hash_of(token)


class TermArrays:
    """The records of many documents, in order: `ends[i]` is where document i's stop."""

    def __init__(self) -> None:
        self.terms = array("Q")
        self.counts = array("L")
        self.fields = bytearray()
        self.ends: list[int] = []

    def __len__(self) -> int:
        return len(self.ends)

    def add(self, fields: Sequence[Iterable[str]]) -> None:
        self.add_counts([Counter(tokens) for tokens in fields])

    def add_counts(self, fields: Sequence[Mapping[str, int]]) -> None:
        """One document from its fields' token counts (records in the mappings' order)."""
        for number, counted in enumerate(fields):
            self.terms.extend(map(_hash_of, counted))
            self.counts.extend(counted.values())
            self.fields.extend(_FIELD_BYTE[number] * len(counted))
        self.ends.append(len(self.terms))


def count_chunks(items: Iterable[ChunkText], into: TermArrays | None = None) -> TermArrays:
    """The counts of many chunks for FIELDS (path, symbol, header, body), in order.

    A file's chunks share their path, so its tokens are counted once per run of
    chunks of that path.
    """
    out = TermArrays() if into is None else into
    last_path, path_counts = None, Counter[str]()
    for path, symbol, header, text in items:
        if path != last_path:
            last_path, path_counts = path, Counter(path_tokens(path))
        out.add_counts(
            (path_counts, token_counts(symbol), token_counts(header), token_counts(text))
        )
    return out
