"""Term counts of one document, as stored beside it in SQLite (the `terms` BLOB column).

A blob is a packed array of 11-byte little-endian records `(term: u64, count: u16,
field: u8)`: the term is a stable 64-bit hash of a token from `bot.text.tokens`
(BLAKE2b; no vocabulary table to keep in step, and a collision among even a
million distinct tokens has odds of about 1 in 30 million), `field` the index of
the field in the document's field list; a count stops at 65,535 (far past where
BM25 saturates; a 24,000-character chunk cannot reach it). Fixed-size records
let a whole repository's blobs be joined and decoded by numpy in one call when
the BM25 engine is built. A file's body counts are the sum of its chunks' body
counts, so no file is tokenised twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from bot.errors import StoreError
from bot.models import Chunk
from bot.text.termarrays import ChunkText as ChunkText  # re-exported for the writers
from bot.text.termarrays import TermArrays, count_chunks
from bot.text.termarrays import term_hash as term_hash
from bot.text.tokens import path_tokens

RECORD = np.dtype([("term", "<u8"), ("count", "<u2"), ("field", "u1")])
MAX_COUNT = 65_535
CHUNK_BODY = 3  # index of "body" in bot.index.base.FIELDS
FILE_FIELDS = ("path", "body")
FILE_BODY = 1
DAMAGED = "The index file is damaged or is not a codecite index; delete it and reindex."

Records = npt.NDArray[np.void]
Ints = npt.NDArray[np.intp]
FILES_BATCH_BYTES = 256 << 10  # chunk blobs summed per numpy pass: its temporaries are ~8x that


class _Packer(TermArrays):
    """Collects the records of many documents and packs them with one numpy call."""

    def blobs(self) -> list[bytes]:
        return pack(self)


def pack(arrays: TermArrays) -> list[bytes]:
    """Each document's records, packed as stored."""
    records = np.empty(len(arrays.terms), dtype=RECORD)
    records["term"] = np.frombuffer(arrays.terms, dtype=np.uint64)
    counts = np.frombuffer(arrays.counts, dtype=f"u{arrays.counts.itemsize}")
    records["count"] = np.minimum(counts, MAX_COUNT)
    records["field"] = np.frombuffer(arrays.fields, dtype=np.uint8)
    packed = records.tobytes()
    size = RECORD.itemsize
    bounds = [0, *arrays.ends]
    return [packed[a * size : b * size] for a, b in pairwise(bounds)]


def encode(fields: Sequence[Iterable[str]]) -> bytes:
    """Count each field's tokens and pack them; fields are numbered in order."""
    packer = _Packer()
    packer.add(fields)
    return packer.blobs()[0]


def chunk_text(chunk: Chunk) -> ChunkText:
    return (chunk.path, chunk.symbol, chunk.header, chunk.text)


def texts_terms(items: Iterable[ChunkText]) -> list[bytes]:
    """The term counts of many chunks for FIELDS (path, symbol, header, body), in order.

    A file's chunks share their path, so its tokens are counted once per run of
    chunks of that path.
    """
    return pack(count_chunks(items))


def chunk_terms(chunk: Chunk) -> bytes:
    """A chunk's counts for FIELDS (path, symbol, header, body)."""
    return texts_terms([chunk_text(chunk)])[0]


def chunks_terms(chunks: Iterable[Chunk]) -> list[bytes]:
    """`chunk_terms` of many chunks, packed together (much faster than one by one)."""
    return texts_terms(map(chunk_text, chunks))


def file_terms(path: str, chunk_blobs: Iterable[bytes]) -> bytes:
    """A file's counts for FILE_FIELDS: its path tokens, and its chunks' bodies summed."""
    return files_terms([(path, list(chunk_blobs))])[0]


def files_terms(files: Iterable[tuple[str, Sequence[bytes]]]) -> list[bytes]:
    """`file_terms` of many (path, chunk blobs), with numpy working on batches of files.

    Each file's body records come sorted by term, as `np.unique` would give them.
    """
    out: list[bytes] = []
    batch: list[tuple[str, Sequence[bytes]]] = []
    size = 0
    for path, blobs in files:
        batch.append((path, blobs))
        size += sum(map(len, blobs))
        if size >= FILES_BATCH_BYTES:  # bounds the arrays below
            out += _files_terms(batch)
            batch, size = [], 0
    return out + _files_terms(batch) if batch else out


def _files_terms(files: Sequence[tuple[str, Sequence[bytes]]]) -> list[bytes]:
    heads = _Packer()
    for path, _ in files:
        heads.add_counts([Counter(path_tokens(path))])  # the path is field 0
    blobs = [blob for _, chunk_blobs in files for blob in chunk_blobs]
    if any(len(blob) % RECORD.itemsize for blob in blobs):
        raise StoreError(DAMAGED, detail="a term-count blob of a size no record divides")
    records = decode(b"".join(blobs))
    owners = np.repeat(
        np.arange(len(files), dtype=np.int32), [len(chunk_blobs) for _, chunk_blobs in files]
    )
    sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)) // RECORD.itemsize
    doc = np.repeat(owners, sizes)
    body = records["field"] == CHUNK_BODY
    term, count, doc = records["term"][body], records["count"][body], doc[body]
    order = _by_doc_and_term(doc, term)
    term, count, doc = term[order], count[order], doc[order]
    first = np.ones(term.size, dtype=bool)
    first[1:] = (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])
    sums = np.bincount(np.cumsum(first) - 1, weights=count)
    summed = np.empty(sums.size, dtype=RECORD)
    summed["term"] = term[first]
    summed["count"] = np.minimum(sums, MAX_COUNT)
    summed["field"] = FILE_BODY
    packed = summed.tobytes()
    ends = np.searchsorted(doc[first], np.arange(len(files) + 1)) * RECORD.itemsize
    return [h + packed[a:b] for h, a, b in zip(heads.blobs(), ends[:-1], ends[1:], strict=True)]


def _by_doc_and_term(doc: npt.NDArray[np.int32], term: npt.NDArray[np.uint64]) -> Ints:
    """The order sorting records by (doc, term): one sort of a 64-bit key made of the doc
    and the term's top 40 bits; a lexsort only when two terms of one doc share those bits."""
    if doc.size == 0 or int(doc[-1]) >= 1 << 24:
        return np.lexsort((term, doc))
    key = (doc.astype(np.uint64) << np.uint64(40)) | (term >> np.uint64(24))
    order = np.argsort(key, kind="stable")
    key, sorted_terms = key[order], term[order]
    if ((key[1:] == key[:-1]) & (sorted_terms[1:] != sorted_terms[:-1])).any():
        return np.lexsort((term, doc))
    return order


def decode(blob: bytes | bytearray) -> Records:
    """The records of one blob (StoreError if it cannot be one)."""
    if len(blob) % RECORD.itemsize:
        raise StoreError(DAMAGED, detail=f"a term-count blob of {len(blob)} bytes")
    return np.frombuffer(blob, dtype=RECORD)
