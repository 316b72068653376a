"""The CPU-bound part of ingesting files, as a pure function a worker process can run.

For each file: scrub secrets, parse and cut it into chunks, read its symbols from
the same parse, and count each chunk's terms (`bot.text.termarrays`).
Nothing here touches the index, the source or the symbol table, and the result
depends on the arguments alone, so a batch prepared in a worker process is
byte for byte the batch the ingesting process would have prepared itself
(`bot.ingest.workers` decides where each batch runs).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.code.languages import language_for
from bot.ingest.secrets import scrub
from bot.models import Chunk, FileDoc, Span
from bot.symbols.extract import analyze
from bot.symbols.packed import PackedSymbols
from bot.text.termarrays import TermArrays, count_chunks

log = logging.getLogger(__name__)

# A chunk's text is capped (a single enormous line can exceed any budget) so every store
# keeps it whole: Pinecone's metadata is limited to 40 KB, and ids derive from the text.
MAX_CHUNK_CHARS = 24_000


@dataclass(frozen=True, slots=True)
class FileJob:
    """One file to prepare: its path, its index key and its text as read."""

    path: str
    key: str
    text: str


@dataclass(frozen=True, slots=True)
class Batch:
    """Files of one repository at one commit; plain values, so it pickles fast."""

    repo: str
    commit: str
    symbols: bool  # also read definitions and references (there is a symbol table)
    terms: bool  # also count each chunk's terms (the index stores them)
    file_text: bool = True  # keep each file's whole text in its FileDoc (an index reads it)
    files: Sequence[FileJob] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class PreparedFile:
    doc: FileDoc
    chunks: list[Chunk]
    symbols: PackedSymbols
    secrets: Counter[str]  # secret kind -> how many were redacted
    terms: TermArrays | None  # each chunk's term counts, in `chunks` order, if asked


def prepare_batch(batch: Batch) -> list[PreparedFile]:
    """Each file of the batch prepared, in order."""
    out: list[tuple[FileDoc, list[Chunk], PackedSymbols, Counter[str]]] = []
    for job in batch.files:
        scrubbed = scrub(job.text, job.path)  # before anything is stored, embedded or shown
        language = language_for(job.path) or "text"
        spans, found = analyze(job.path, scrubbed.text, language, symbols=batch.symbols)
        chunks = chunks_for(batch.repo, job.path, language, scrubbed.text, batch.commit, spans)
        text = scrubbed.text if batch.file_text else ""
        doc = FileDoc(job.path, job.key, language, text, tuple(c.id for c in chunks))
        out.append((doc, chunks, found, scrubbed.found))
    log.debug("prepared %d files of %s", len(out), batch.repo)  # the record names the process
    return [
        PreparedFile(doc, chunks, found, secrets, _counted(chunks) if batch.terms else None)
        for doc, chunks, found, secrets in out
    ]


def _counted(chunks: list[Chunk]) -> TermArrays:
    # Counted here, packed by the writer (`termcounts.pack`), which alone needs numpy.
    return count_chunks((c.path, c.symbol, c.header, c.text) for c in chunks)


def chunks_for(
    repo: str, path: str, language: str, text: str, commit: str, spans: list[Span]
) -> list[Chunk]:
    lines = text.splitlines()
    out: list[Chunk] = []
    for span in spans:
        body = "\n".join(lines[span.start_line - 1 : span.end_line])[:MAX_CHUNK_CHARS]
        out.append(
            Chunk(
                repo=repo,
                path=path,
                language=language,
                start_line=span.start_line,
                end_line=span.end_line,
                kind=span.kind,
                symbol=span.symbol,
                header=span.header,
                text=body,
                commit=commit,
            )
        )
    return out
