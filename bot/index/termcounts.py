"""Term counts of one document, as stored beside it in SQLite (the `terms` BLOB column).

A blob is a packed array of 11-byte little-endian records `(term: u64, count: u16,
field: u8)`: the term is a stable 64-bit hash of a token from `bot.index.tokens`
(BLAKE2b; no vocabulary table to keep in step, and a collision among even a
million distinct tokens has odds of about 1 in 30 million), `field` the index of
the field in the document's field list; a count stops at 65,535 (far past where
BM25 saturates; a 24,000-character chunk cannot reach it). Fixed-size records
let a whole repository's blobs be joined and decoded by numpy in one call when
the BM25 engine is built. A file's body counts are the sum of its chunks' body
counts, so no file is tokenised twice.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from bot.errors import StoreError
from bot.index.tokens import code_tokens, path_tokens
from bot.models import Chunk

RECORD = np.dtype([("term", "<u8"), ("count", "<u2"), ("field", "u1")])
MAX_COUNT = 65_535
CHUNK_BODY = 3  # index of "body" in bot.index.base.FIELDS
FILE_FIELDS = ("path", "body")
FILE_BODY = 1
DAMAGED = "The index file is damaged or is not a codecite index; delete it and reindex."
_FIELD_BYTE = [bytes([n]) for n in range(256)]

Records = npt.NDArray[np.void]


def term_hash(token: str) -> int:
    """The stable 64-bit id of a token (the same in every process and version)."""
    return _HASHES[token]


class _HashCache(dict[str, int]):
    """token -> hash, computed once; a plain dict lookup is the hot path of indexing."""

    LIMIT = 1_000_000  # about 100 MB; a larger vocabulary starts over rather than grow

    def __missing__(self, token: str) -> int:
        if len(self) >= self.LIMIT:
            self.clear()
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = self[token] = int.from_bytes(digest, "little")
        return value


_HASHES = _HashCache()


class _Packer:
    """Collects the records of many documents and packs them with one numpy call."""

    def __init__(self) -> None:
        self.terms = array("Q")
        self.counts = array("L")
        self.fields = bytearray()
        self.ends: list[int] = []

    def add(self, fields: Sequence[Iterable[str]]) -> None:
        for number, tokens in enumerate(fields):
            counted = Counter(tokens)
            self.terms.extend(map(_HASHES.__getitem__, counted))
            self.counts.extend(counted.values())
            self.fields.extend(_FIELD_BYTE[number] * len(counted))
        self.ends.append(len(self.terms))

    def blobs(self) -> list[bytes]:
        records = np.empty(len(self.terms), dtype=RECORD)
        records["term"] = np.frombuffer(self.terms, dtype=np.uint64)
        counts = np.frombuffer(self.counts, dtype=f"u{self.counts.itemsize}")
        records["count"] = np.minimum(counts, MAX_COUNT)
        records["field"] = np.frombuffer(self.fields, dtype=np.uint8)
        packed = records.tobytes()
        size = RECORD.itemsize
        bounds = [0, *self.ends]
        return [packed[a * size : b * size] for a, b in pairwise(bounds)]


def encode(fields: Sequence[Iterable[str]]) -> bytes:
    """Count each field's tokens and pack them; fields are numbered in order."""
    packer = _Packer()
    packer.add(fields)
    return packer.blobs()[0]


def _chunk_fields(chunk: Chunk) -> tuple[list[str], ...]:
    return (
        path_tokens(chunk.path),
        code_tokens(chunk.symbol),
        code_tokens(chunk.header),
        code_tokens(chunk.text),
    )


def chunk_terms(chunk: Chunk) -> bytes:
    """A chunk's counts for FIELDS (path, symbol, header, body)."""
    return encode(_chunk_fields(chunk))


def chunks_terms(chunks: Iterable[Chunk]) -> list[bytes]:
    """`chunk_terms` of many chunks, packed together (much faster than one by one)."""
    packer = _Packer()
    for chunk in chunks:
        packer.add(_chunk_fields(chunk))
    return packer.blobs()


def file_terms(path: str, chunk_blobs: Iterable[bytes]) -> bytes:
    """A file's counts for FILE_FIELDS: its path tokens, and its chunks' bodies summed."""
    body = [r[r["field"] == CHUNK_BODY] for r in map(decode, chunk_blobs)]
    merged = np.concatenate(body) if body else np.empty(0, dtype=RECORD)
    terms, where = np.unique(merged["term"], return_inverse=True)
    sums = np.bincount(where.reshape(-1), weights=merged["count"], minlength=terms.size)
    records = np.empty(terms.size, dtype=RECORD)
    records["term"] = terms
    records["count"] = np.minimum(sums, MAX_COUNT)
    records["field"] = FILE_BODY
    return encode((path_tokens(path),)) + records.tobytes()  # the path is field 0


def decode(blob: bytes) -> Records:
    """The records of one blob (StoreError if it cannot be one)."""
    if len(blob) % RECORD.itemsize:
        raise StoreError(DAMAGED, detail=f"a term-count blob of {len(blob)} bytes")
    return np.frombuffer(blob, dtype=RECORD)
