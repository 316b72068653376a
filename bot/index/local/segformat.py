"""The segment file format (see `segfiles`): a repository's segments as aligned numpy arrays,

    b"CCSEG" + version byte + 2 spare bytes | u64 header length | header (JSON) | u32 CRC of it
    | arrays, each at a 64-byte-aligned offset the header gives

and the values built from it: `RepoSegments`, `PathTable`.
"""

from __future__ import annotations

import json
import mmap
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bot.index.local import bm25

MAGIC = b"CCSEG"
VERSION = 1
_PREFIX = struct.Struct("<5sB2xQ")  # magic, version, header length
_CRC = struct.Struct("<I")
_ALIGN = 64
_READ_PIECE = 1 << 20
_SEGMENT_ARRAYS = ("ids", "terms", "indptr", "docs", "saturated", "counts", "norm")
_VIEW_ARRAYS = ("terms", "indptr", "docs", "saturated", "counts")  # ids, norm: the parent's
# Arrays every query or file lookup reads: their checksums are verified when a file opens.
_CHECKED = tuple(".ids .terms .indptr .norm path_fids path_rows path_ends path_bytes".split())


class PathTable:
    """File rowid -> path of one repository, over arrays (mapped or built)."""

    def __init__(
        self,
        fids: npt.NDArray[np.int64],
        rows: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        data: npt.NDArray[np.uint8],
    ) -> None:
        # fids sorted; rows[i]: where the path of fids[i] lies among `ends` (cumulative bytes)
        self.fids, self.rows, self.ends, self.data = fids, rows, ends, data
        self._paths: dict[int, str] | None = None  # two threads may both build it: the same

    @classmethod
    def of(cls, paths: Mapping[int, str]) -> PathTable:
        fids = np.fromiter(paths, dtype=np.int64, count=len(paths))
        encoded = [p.encode("utf-8", "surrogatepass") for p in paths.values()]
        ends = np.cumsum([len(e) for e in encoded], dtype=np.int64)
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        order = np.argsort(fids, kind="stable")
        return cls(fids[order], order.astype(np.int64), ends, data)

    def get(self, fid: int) -> str | None:
        return self._by_fid().get(fid)

    def _by_fid(self) -> dict[int, str]:
        """Every path, decoded on the first lookup (a file hit is then a dict lookup)."""
        if self._paths is None:
            raw = bytes(self.data)
            ends = self.ends.tolist()
            bounds = list(zip([0, *ends][:-1], ends, strict=True))
            if raw.isascii():  # offsets count bytes, which are then characters
                text = raw.decode("ascii")
                paths = [text[a:b] for a, b in bounds]
            else:
                paths = [raw[a:b].decode("utf-8", "surrogatepass") for a, b in bounds]
            rows = self.rows.tolist()
            self._paths = dict(zip(self.fids.tolist(), (paths[r] for r in rows), strict=True))
        return self._paths

    def __len__(self) -> int:
        return int(self.fids.size)


@dataclass(frozen=True, slots=True)
class RepoSegments:
    """What one repository contributes to the engine, at one generation."""

    repo: str
    generation: int
    chunks: bm25.Segment
    files: bm25.Segment
    paths: PathTable


def arrays_of(found: RepoSegments) -> dict[str, np.ndarray[Any, Any]]:
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for prefix, seg in (("chunks", found.chunks), ("files", found.files)):
        for name in _SEGMENT_ARRAYS:
            arrays[f"{prefix}.{name}"] = getattr(seg, name)
    for number, view in enumerate(found.chunks.views.values()):
        for name in _VIEW_ARRAYS:
            arrays[f"view{number}.{name}"] = getattr(view, name)
    paths = found.paths
    arrays |= {
        "path_fids": paths.fids,
        "path_rows": paths.rows,
        "path_ends": paths.ends,
        "path_bytes": paths.data,
    }
    return arrays


def write_file(
    handle: Any, header: dict[str, Any], arrays: Mapping[str, np.ndarray[Any, Any]]
) -> None:
    # The header's length depends on the offsets and they on it: lay it out with the
    # widest values it can hold, then pad the real header to that length.
    layout: list[list[Any]] = []
    offset = 0
    for name, array in arrays.items():
        data = np.ascontiguousarray(array)
        layout.append([name, data.dtype.str, list(data.shape), offset, int(data.nbytes), None])
        offset += _aligned(int(data.nbytes))
    widest = [[*entry[:3], 1 << 62, entry[4], 0xFFFFFFFF] for entry in layout]
    draft = json.dumps(header | {"arrays": widest, "size": 1 << 62}).encode()
    start = _aligned(_PREFIX.size + len(draft) + _CRC.size)
    for entry in layout:
        entry[3] += start
        name = str(entry[0])
        if name.endswith(_CHECKED):
            entry[5] = _crc(arrays[name])
    head = json.dumps(header | {"arrays": layout, "size": start + offset}).encode()
    head = head.ljust(start - _PREFIX.size - _CRC.size)
    handle.write(_PREFIX.pack(MAGIC, VERSION, len(head)) + head + _CRC.pack(zlib.crc32(head)))
    for array in arrays.values():
        data = np.ascontiguousarray(array)
        handle.write(data.reshape(-1).view(np.uint8))  # the array's own bytes: no copy
        handle.write(b"\0" * (_aligned(int(data.nbytes)) - int(data.nbytes)))


def _crc(array: np.ndarray[Any, Any]) -> int:
    return zlib.crc32(np.ascontiguousarray(array).data)


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def read_header(handle: Any) -> dict[str, Any] | None:
    prefix = handle.read(_PREFIX.size)
    if len(prefix) != _PREFIX.size:
        return None
    magic, version, length = _PREFIX.unpack(prefix)
    if magic != MAGIC or version != VERSION or length > 1 << 26:
        return None
    head = handle.read(length)
    crc = handle.read(_CRC.size)
    if len(head) != length or len(crc) != _CRC.size or _CRC.unpack(crc)[0] != zlib.crc32(head):
        return None
    try:
        header = json.loads(head)
    except ValueError:
        return None
    return header if isinstance(header, dict) else None


def checksums_match(handle: Any, header: Mapping[str, Any]) -> bool:
    """The checked arrays' CRCs, read through the file rather than the mapping: the pages
    go to the page cache, not into this process's resident memory."""
    try:
        for _, _, _, offset, nbytes, crc in header["arrays"]:
            if crc is None:
                continue
            handle.seek(offset)
            value, left = 0, int(nbytes)
            while left:
                piece = handle.read(min(left, _READ_PIECE))
                if not piece:
                    return False
                value, left = zlib.crc32(piece, value), left - len(piece)
            if value != crc:
                return False
    except (ValueError, TypeError, OverflowError):  # a header of the wrong shape
        return False
    return True


def segments_of(
    repo: str, generation: int, header: Mapping[str, Any], mapped: mmap.mmap | None
) -> RepoSegments:
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for name, dtype, shape, offset, nbytes, _checksum in header["arrays"]:
        kind = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if count * kind.itemsize != nbytes:
            raise ValueError(f"{name}: {nbytes} bytes for shape {shape}")
        if nbytes == 0 or mapped is None:
            array = np.zeros(shape, dtype=kind)
        else:
            array = np.frombuffer(mapped, dtype=kind, count=count, offset=offset).reshape(shape)
        arrays[name] = array
    chunks = _segment(arrays, "chunks")
    for number, fields in enumerate(header["views"]):
        chunks.views[tuple(float(w) for w in fields)] = _view(arrays, f"view{number}", chunks)
    files = _segment(arrays, "files")
    paths = PathTable(
        arrays["path_fids"], arrays["path_rows"], arrays["path_ends"], arrays["path_bytes"]
    )
    if len(paths) != files.size:
        raise ValueError("paths and file documents differ in number")
    return RepoSegments(repo, generation, chunks, files, paths)


def _segment(arrays: Mapping[str, np.ndarray[Any, Any]], prefix: str) -> bm25.Segment:
    ids, terms, indptr, docs, saturated, counts, norm = (
        arrays[f"{prefix}.{name}"] for name in _SEGMENT_ARRAYS
    )
    seg = bm25.Segment(ids, terms, indptr, docs, saturated, counts, norm)
    _check_shape(seg)
    return seg


def _view(
    arrays: Mapping[str, np.ndarray[Any, Any]], prefix: str, parent: bm25.Segment
) -> bm25.Segment:
    terms, indptr, docs, saturated, counts = (arrays[f"{prefix}.{name}"] for name in _VIEW_ARRAYS)
    view = bm25.Segment(parent.ids, terms, indptr, docs, saturated, counts, parent.norm)
    _check_shape(view)
    return view


def _check_shape(seg: bm25.Segment) -> None:
    """Sizes that must agree, so no query indexes past an array (cheap: no posting read)."""
    n, v, p = seg.ids.size, seg.terms.size, seg.docs.size
    if seg.norm.size != n or seg.indptr.size != v + 1 or seg.saturated.size != p:
        raise ValueError("array sizes disagree")
    if seg.counts.shape[0] != p or (v and (int(seg.indptr[0]) != 0 or int(seg.indptr[-1]) != p)):
        raise ValueError("postings bounds disagree")
    if v > 1 and not bool((seg.indptr[1:] >= seg.indptr[:-1]).all()):
        raise ValueError("postings out of order")
