"""The answer given when no model is configured: the best places, with short excerpts.

Each excerpt shows the lines of a source that best match the question (see
`bot.answer.excerpts`), cited with their own exact lines and labelled with the one
definition they belong to (`bot.answer.labels`). Places that hold much less of the
question than the best one are left out rather than padding the answer to five
(`above_floor`). When the indexed code does not seem to cover the question, the answer
says so first and lists the nearest places instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.answer.citations import Permalink, to_citation
from bot.answer.excerpts import best_excerpt
from bot.answer.labels import excerpt_block, one_definition
from bot.models import Citation, Hit
from bot.retrieval.retriever import Source
from bot.symbols.model import SymbolDef

MAX_PLACES = 5
RELATIVE_FLOOR = 0.6  # a place holding less than this share of the best place's relevance
NO_MODEL = "No language model is configured, so here are the most relevant places in the code:"
NOTHING = "I found nothing in the indexed code that matches this question."


def extractive_answer(
    weights: Mapping[str, float],
    sources: Sequence[Source],
    permalink: Permalink,
    *,
    not_covered: str = "",
    definitions: Sequence[SymbolDef] = (),
) -> tuple[str, tuple[Citation, ...]]:
    """`weights`: the question's tokens and how much each counts when picking lines;
    `not_covered`: the sentence saying what the code does not mention ("" when it does);
    `definitions`: the symbol table's definitions in the sources' files, for labels."""
    if not sources:
        return NOTHING, ()
    parts = [f"{not_covered}; the nearest places are:" if not_covered else NO_MODEL]
    citations: list[Citation] = []
    for source in sources[:MAX_PLACES]:
        excerpt = best_excerpt(source, weights)
        cite = to_citation(excerpt, permalink)
        citations.append(cite)
        parts.append(
            excerpt_block(cite.label, one_definition(source, excerpt, definitions), excerpt)
        )
    return "\n\n".join(parts), tuple(citations)


def above_floor(
    sources: Sequence[Source], hits: Sequence[Hit], floor: float = RELATIVE_FLOOR
) -> list[Source]:
    """The sources whose best judged hit holds at least `floor` of the best source's
    relevance (the first source always stays; unjudged sources count as 0)."""
    rated = [(s, _relevance(s, hits)) for s in sources]
    best = max((r for _, r in rated if r is not None), default=None)
    if best is None or best <= 0:
        return list(sources)
    return [s for i, (s, r) in enumerate(rated) if i == 0 or (r or 0.0) >= floor * best]


def _relevance(source: Source, hits: Sequence[Hit]) -> float | None:
    found = [
        h.relevance
        for h in hits
        if h.relevance is not None
        and h.chunk.repo == source.repo
        and h.chunk.path == source.path
        and h.chunk.start_line <= source.end_line
        and h.chunk.end_line >= source.start_line
    ]
    return max(found) if found else None
