"""Code-aware BM25 sparse vectors, for stores that score sparse vectors by dot product.

Pinecone ranks a hybrid query by `dense·q_dense + sparse·q_sparse`. To make the
sparse half behave like BM25 over the same code-aware tokens the local index
uses (`bot.text.tokens`), each side carries half of the BM25 formula:

- a document vector holds, per token, the saturated and length-normalised term
  frequency `tf / (tf + k1 * (1 - b + b * dl / avgdl))`, a number in [0, 1);
- a query vector holds the tokens' IDF weights, normalised to sum to 1, from
  document-frequency statistics the caller keeps (`CorpusStats`).

Their dot product is BM25 divided by `(k1 + 1)` and by the query's total IDF, so
a sparse score lies in [0, 1): comparable with a dense inner product of unit
vectors, which keeps a convex `alpha` blend meaningful.

Tokens become dimensions through a stable hash (the first 4 bytes of BLAKE2b,
a uint32 as Pinecone requires); a collision merely merges two rare tokens.
Fields cannot be targeted inside one vector, so path and symbol tokens are
boosted (counted more than once) at encoding time instead. `avgdl` is a fixed
constant rather than a corpus average: a document is encoded once, when it is
written, and a moving average would give old and new documents different
normalisations. Nothing here downloads anything (no NLTK, no vocabularies).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from bot.store.records import CorpusStats  # kept beside the index (`PineconeStateRecords`)
from bot.text.tokens import FLAG_PREFIX, iter_tokens, path_tokens

MAX_NONZEROS = 1000  # Pinecone's cap on non-zero values in one sparse vector
_DIGITS = 6  # weights are rounded: smaller requests, same ranking


@lru_cache(maxsize=200_000)
def token_index(token: str) -> int:
    """The stable uint32 dimension of a token."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Parallel `indices` (ascending, unique) and `values`."""

    indices: tuple[int, ...] = ()
    values: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError("indices and values must have the same length")

    def __len__(self) -> int:
        return len(self.indices)

    def as_dict(self) -> dict[str, list[int] | list[float]]:
        """The wire form Pinecone expects."""
        return {"indices": list(self.indices), "values": list(self.values)}

    def scaled(self, factor: float) -> SparseVector:
        return SparseVector(self.indices, tuple(v * factor for v in self.values))

    def dot(self, other: SparseVector) -> float:
        mine = dict(zip(self.indices, self.values, strict=True))
        return sum(mine.get(i, 0.0) * v for i, v in zip(other.indices, other.values, strict=True))


@dataclass(frozen=True, slots=True)
class FieldBoosts:
    """How many times one occurrence counts, per field (the lexical `fields` stand-in)."""

    path: float = 2.0
    symbol: float = 3.0
    header: float = 1.0
    body: float = 1.0


def query_tokens(terms: Iterable[str]) -> list[str]:
    """Distinct code-aware tokens of the query terms, first-seen order.

    Terms usually arrive tokenised already; running them through the tokenizer
    again is idempotent for those and makes `registerHook` match like the index. An
    option token ("__setup_show") is one already and is kept as it is.
    """
    seen: dict[str, None] = {}
    for term in terms:
        if term.startswith(FLAG_PREFIX):
            seen.setdefault(term, None)
            continue
        for tok in iter_tokens(term):
            seen.setdefault(tok, None)
    return list(seen)


@dataclass(frozen=True, slots=True)
class SparseEncoder:
    """BM25 halves as sparse vectors. Defaults suit code chunks; files need a larger avgdl."""

    k1: float = 1.2
    b: float = 0.75
    avgdl: float = 150.0
    max_nonzeros: int = MAX_NONZEROS
    boosts: FieldBoosts = FieldBoosts()

    def __post_init__(self) -> None:
        if self.k1 <= 0 or not 0 <= self.b <= 1 or self.avgdl <= 0:
            raise ValueError("k1 > 0, 0 <= b <= 1 and avgdl > 0 are required")
        if not 1 <= self.max_nonzeros <= MAX_NONZEROS:
            raise ValueError(f"max_nonzeros must be between 1 and {MAX_NONZEROS}")

    def term_frequencies(
        self, body: str, *, path: str = "", symbol: str = "", header: str = ""
    ) -> dict[int, float]:
        """Boosted term frequency per token dimension."""
        tf: dict[int, float] = {}
        fields = (
            (path_tokens(path) if path else [], self.boosts.path),
            (list(iter_tokens(symbol)), self.boosts.symbol),
            (list(iter_tokens(header)), self.boosts.header),
            (list(iter_tokens(body)), self.boosts.body),
        )
        for tokens, boost in fields:
            for tok in tokens:
                idx = token_index(tok)
                tf[idx] = tf.get(idx, 0.0) + boost
        return tf

    def encode_document(
        self, body: str, *, path: str = "", symbol: str = "", header: str = ""
    ) -> SparseVector:
        """Saturated, length-normalised term frequencies; the heaviest `max_nonzeros` kept."""
        tf = self.term_frequencies(body, path=path, symbol=symbol, header=header)
        if not tf:
            return SparseVector()
        length = sum(tf.values())
        norm = self.k1 * (1.0 - self.b + self.b * length / self.avgdl)
        weights = {i: round(f / (f + norm), _DIGITS) for i, f in tf.items()}
        return _top(weights, self.max_nonzeros)

    def encode_query(self, tokens: Iterable[str], stats: CorpusStats | None) -> SparseVector:
        """IDF weights of the tokens, normalised to sum to 1; uniform without statistics.

        With statistics, a token no document holds is left out, as BM25 leaves it out: it
        could match nothing, and its weight would only shrink the others' share.
        """
        weights: dict[int, float] = {}
        for tok in tokens:
            idx = token_index(tok)
            if stats is not None and stats.documents > 0 and stats.df.get(idx, 0) <= 0:
                continue
            weights[idx] = max(weights.get(idx, 0.0), _idf(idx, stats))
        total = sum(weights.values())
        if total <= 0:
            return SparseVector()
        normalised = {i: round(w / total, _DIGITS) for i, w in weights.items()}
        return _top(normalised, self.max_nonzeros)


def _idf(idx: int, stats: CorpusStats | None) -> float:
    """BM25's IDF, never negative: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    if stats is None:
        return 1.0
    n = max(0, stats.documents)
    df = min(max(0, stats.df.get(idx, 0)), n)
    return math.log1p((n - df + 0.5) / (df + 0.5))


def _top(weights: dict[int, float], limit: int) -> SparseVector:
    """The `limit` heaviest non-zero entries (ties by index, for determinism), by index."""
    kept = [(i, w) for i, w in weights.items() if w > 0]
    if len(kept) > limit:
        kept.sort(key=lambda item: (-item[1], item[0]))
        kept = kept[:limit]
    kept.sort()
    return SparseVector(tuple(i for i, _ in kept), tuple(w for _, w in kept))
