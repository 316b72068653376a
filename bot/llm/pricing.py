"""Estimated embedding cost, so teams see what indexing spends (list prices, USD)."""

from __future__ import annotations

# USD per million input tokens, for the embedding models people commonly use.
EMBEDDING_PRICES = {
    "text-embedding-3-small": 0.02,
    "text-embedding-3-large": 0.13,
    "text-embedding-ada-002": 0.10,
}


def embedding_cost(model: str, tokens: int) -> float | None:
    """Dollars for `tokens` of `model`; None when its price is unknown (e.g. a local model)."""
    price = EMBEDDING_PRICES.get(model.rsplit("/", 1)[-1])
    return None if price is None else tokens * price / 1_000_000


def describe_cost(model: str, tokens: int) -> str:
    cost = embedding_cost(model, tokens)
    if cost is None:
        return "price unknown"
    return f"≈${cost:.4f}" if cost < 1 else f"≈${cost:,.2f}"
