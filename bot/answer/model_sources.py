"""What the model reads, best first and small: the sources of a prompt, cut to a budget.

Retrieval hands over up to a dozen blocks; a model reads the first ones most closely
and a long prompt costs time and money. So the sources keep their order (the path's
steps and the symbol table's definitions come first, see `how_answer.how_sources` and
`bot.retrieval.symbol_facts.exact_first`), sources that hold much less of the question
than the best one are left out (`extractive.above_floor`), a long block is cut to its
densest window of lines (line numbers stay the file's own), and sources are added only
while they fit in `SOURCE_CHARS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.answer.excerpts import line_scores
from bot.answer.extractive import above_floor
from bot.models import Hit
from bot.retrieval.retriever import Source

SOURCE_CHARS = 10_000  # all sources together; the rules, facts and question come on top
WINDOW_LINES = 45  # a longer block is cut to its densest window of this many lines
KEEP_FIRST = 3  # the first sources stay whatever their relevance (definitions, the path)
MODEL_FLOOR = 0.4  # a model reads past a weak source: a lower floor than an excerpt's


def for_model(
    sources: Sequence[Source], hits: Sequence[Hit], weights: Mapping[str, float]
) -> list[Source]:
    """`sources` in order, the weak ones dropped, each cut to a window, within the budget."""
    kept = set(map(id, above_floor(sources, hits, MODEL_FLOOR)))
    chosen: list[Source] = []
    used = 0
    for i, source in enumerate(sources):
        if i >= KEEP_FIRST and id(source) not in kept:
            continue
        cut = window(source, weights)
        cost = len(cut.text) + 80  # the marker line around it
        if chosen and used + cost > SOURCE_CHARS:
            continue
        chosen.append(cut)
        used += cost
    return chosen


def window(source: Source, weights: Mapping[str, float], lines: int = WINDOW_LINES) -> Source:
    """The `lines` consecutive lines of `source` that hold most of the question's weight."""
    text = source.text.split("\n")
    if len(text) <= lines:
        return source
    scores = line_scores(text, weights)
    best, best_score = 0, -1.0
    running = sum(scores[:lines])
    for start in range(0, len(text) - lines + 1):
        if start:
            running += scores[start + lines - 1] - scores[start - 1]
        if running > best_score:
            best, best_score = start, running
    kept = text[best : best + lines]
    first = source.start_line + best
    return replace(source, start_line=first, end_line=first + len(kept) - 1, text="\n".join(kept))
