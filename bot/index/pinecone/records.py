"""What codecite stores in Pinecone: record ids, metadata, filters and request batches.

Three kinds of record share one namespace, told apart by the `rec` metadata field:

    chunk   `repo#path#digest`  one per chunk: dense + sparse vectors, chunk metadata
    file    `repo#path#file`    one per file: a sparse vector over path + whole text
    repo    `repo##state`       one per repository: its RepoState, written last

Chunk ids come from `Chunk.id`. Pinecone ids must be ASCII, so characters outside
printable ASCII (and `%` itself) are percent-encoded; the encoding works character
by character, so an encoded prefix is a prefix of every encoded id it matches. An
id still longer than 512 characters is replaced by `repo#~<sha256>`; its chunk id
is then recovered from the record's metadata.

Metadata never holds null (Pinecone rejects it): absent values are "". The chunk
text is trimmed so that a record's metadata stays under 40 KB.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from bot.index.base import FIELDS
from bot.models import Chunk, FileDoc, RepoState
from bot.text.tokens import code_tokens, path_tokens

ID_LIMIT = 512
METADATA_LIMIT = 40 * 1024
METADATA_BUDGET = METADATA_LIMIT - 1024  # headroom for the service's own accounting
REQUEST_BUDGET = 2_000_000 - 64 * 1024  # under 2 MB, measured as the JSON we send
MAX_UPSERT_RECORDS = 500
MAX_DELETE_IDS = 1000
MAX_FETCH_IDS = 100  # fetch ids travel in the URL
QUERY_TOP_K_LIMIT = 1000  # with metadata included, larger answers risk the 4 MB cap
SYMBOL_LIMIT = 1000
HEADER_LIMIT = 4000

CHUNK, FILE, REPO = "chunk", "file", "repo"
PLACEHOLDER = 1e-6  # dense value for records without an embedding (all-zero is refused)

_DIGEST_TAIL = re.compile(r"#[0-9a-f]{16}\Z")
_FILE_TAIL = "#file"
_STATE_TAIL = "##state"

Record = dict[str, Any]


def _encode(text: str) -> str:
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "%" or code < 0x20 or code >= 0x7F:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "".join(out)


def _decode(text: str) -> str:
    raw = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%" and _is_hex(text[i + 1 : i + 3]):
            raw.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.extend(text[i].encode("ascii", "replace"))
            i += 1
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return text  # not one of ours; `classify` then defers to metadata


def _is_hex(pair: str) -> bool:
    return len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair)


def record_id(key: str) -> str:
    """The ASCII record id for a chunk id (or any `repo#...` key)."""
    encoded = _encode(key)
    if len(encoded) <= ID_LIMIT:
        return encoded
    repo = key.split("#", 1)[0]
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{_encode(repo)[:200]}#~{digest}"


def id_prefix(prefix: str) -> str:
    """The record-id prefix matching every record whose key starts with `prefix`."""
    return _encode(prefix)


def repo_prefix(repo: str) -> str:
    return id_prefix(f"{repo}#")


def file_record_id(repo: str, path: str) -> str:
    return record_id(f"{repo}#{path}{_FILE_TAIL}")


def repo_record_id(repo: str) -> str:
    return record_id(f"{repo}{_STATE_TAIL}")


def classify(rid: str) -> tuple[str, str]:
    """(kind, key) for a listed record id; kind "" when only metadata can tell."""
    key = _decode(rid)
    if record_id(key) != rid:
        return "", ""
    if _DIGEST_TAIL.search(key):
        return CHUNK, key
    if key.endswith(_STATE_TAIL):
        return REPO, key[: -len(_STATE_TAIL)]
    if key.endswith(_FILE_TAIL):
        return FILE, key
    return "", ""


def json_size(obj: Any) -> int:
    """Bytes of the compact JSON the SDK sends."""
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _clean(text: str, limit: int | None = None) -> str:
    """Valid UTF-8 (lone surrogates from undecodable paths become "?"), optionally capped."""
    if limit is not None and len(text) > limit:
        text = text[:limit]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def fit_text(text: str, budget: int) -> tuple[str, bool]:
    """The longest prefix of `text` whose JSON form fits `budget` bytes, cut at a line end."""
    if json_size(text) - 2 <= budget:
        return text, False
    lo, hi = 0, len(text)
    while lo < hi:  # largest prefix length that fits
        mid = (lo + hi + 1) // 2
        if json_size(text[:mid]) - 2 <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text.rfind("\n", 0, lo)
    keep = cut + 1 if cut >= lo * 4 // 5 else lo
    return text[:keep], True


def chunk_metadata(chunk: Chunk, *, dense: bool) -> dict[str, Any]:
    """Everything needed to rebuild the Chunk, under the metadata size limit."""
    meta: dict[str, Any] = {
        "rec": CHUNK,
        "repo": _clean(chunk.repo),
        "path": _clean(chunk.path),
        "language": _clean(chunk.language),
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "kind": _clean(chunk.kind),
        "symbol": _clean(chunk.symbol, SYMBOL_LIMIT),
        "header": _clean(chunk.header, HEADER_LIMIT),
        "commit": _clean(chunk.commit),
        "dense": dense,
        "truncated": False,
        "text": "",
    }
    text, truncated = fit_text(_clean(chunk.text), METADATA_BUDGET - json_size(meta))
    meta["text"] = text
    meta["truncated"] = truncated
    return meta


def chunk_from_metadata(meta: Mapping[str, Any]) -> Chunk:
    return Chunk(
        repo=str(meta.get("repo", "")),
        path=str(meta.get("path", "")),
        language=str(meta.get("language", "")),
        start_line=int(meta.get("start_line", 0)),
        end_line=int(meta.get("end_line", 0)),
        kind=str(meta.get("kind", "")),
        symbol=str(meta.get("symbol", "")),
        header=str(meta.get("header", "")),
        text=str(meta.get("text", "")),
        commit=str(meta.get("commit", "")),
    )


def restricted_fields(fields: Sequence[str] | None) -> tuple[str, ...]:
    """The fields to enforce, or () when the query may match anywhere."""
    if fields is None:
        return ()
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown lexical fields: {sorted(unknown)}")
    return () if set(FIELDS) <= set(fields) else tuple(fields)


def matches_fields(chunk: Chunk, tokens: set[str], fields: Sequence[str]) -> bool:
    texts = {"path": chunk.path, "symbol": chunk.symbol, "header": chunk.header, "body": chunk.text}
    for name in fields:
        found = path_tokens(texts[name]) if name == "path" else code_tokens(texts[name])
        if tokens.intersection(found):
            return True
    return False


def file_metadata(repo: str, doc: FileDoc) -> dict[str, Any]:
    return {
        "rec": FILE,
        "repo": _clean(repo),
        "path": _clean(doc.path),
        "language": _clean(doc.language),
        "blob": _clean(doc.blob),
        "dense": False,
    }


def repo_metadata(state: RepoState) -> dict[str, Any]:
    return {
        "rec": REPO,
        "repo": _clean(state.name),
        "source": _clean(state.source),
        "branch": _clean(state.branch),
        "commit": _clean(state.commit),
        "indexed_at": state.indexed_at.astimezone(UTC).isoformat(),
        "web_url": _clean(state.web_url),
        "files": state.files,
        "chunks": state.chunks,
        "dense": False,
    }


def repo_state_from_metadata(meta: Mapping[str, Any]) -> RepoState:
    return RepoState(
        name=str(meta.get("repo", "")),
        source=str(meta.get("source", "")),
        branch=str(meta.get("branch", "")),
        commit=str(meta.get("commit", "")),
        indexed_at=datetime.fromisoformat(str(meta.get("indexed_at", "1970-01-01T00:00:00+00:00"))),
        web_url=str(meta.get("web_url", "")),
        files=int(meta.get("files", 0)),
        chunks=int(meta.get("chunks", 0)),
    )


def placeholder(dimension: int) -> list[float]:
    """A dense vector for records without an embedding: scores ~0 against any query."""
    return [PLACEHOLDER] + [0.0] * (dimension - 1)


def search_filter(
    repos: frozenset[str] | None, rec: str, *, dense_only: bool = False
) -> dict[str, Any]:
    """Record kind, repository scope and (optionally) "has an embedding", server-side."""
    clauses: list[dict[str, Any]] = [{"rec": {"$eq": rec}}]
    if repos is not None:
        names = sorted(repos)
        clauses.append({"repo": {"$eq": names[0]}} if len(names) == 1 else {"repo": {"$in": names}})
    if dense_only:
        clauses.append({"dense": {"$eq": True}})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def upsert_batches(records: Sequence[Record], namespace: str = "") -> Iterator[list[Record]]:
    """Consecutive batches under MAX_UPSERT_RECORDS and REQUEST_BUDGET bytes of JSON."""
    envelope = json_size({"vectors": [], "namespace": namespace})
    batch: list[Record] = []
    size = envelope
    for record in records:
        rsize = json_size(_wire(record)) + 1  # the comma between records
        if batch and (len(batch) >= MAX_UPSERT_RECORDS or size + rsize > REQUEST_BUDGET):
            yield batch
            batch, size = [], envelope
        batch.append(record)
        size += rsize
    if batch:
        yield batch


def _wire(record: Record) -> Record:
    """The record as the SDK puts it on the wire (camelCase sparse values)."""
    wire = {k: v for k, v in record.items() if k != "sparse_values"}
    if "sparse_values" in record:
        wire["sparseValues"] = record["sparse_values"]
    return wire


def id_batches(ids: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])
