"""The answer given when no model is configured: the best places, with short excerpts.

Each excerpt shows the lines of a source that best match the question (see
`bot.answer.excerpts`), cited with their own exact lines. When the indexed code
does not seem to cover the question, the answer says so first and lists the
nearest places instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.answer.citations import Permalink, to_citation
from bot.answer.excerpts import best_excerpt
from bot.models import Citation
from bot.retrieval.retriever import Source

MAX_PLACES = 5
NO_MODEL = "No language model is configured, so here are the most relevant places in the code:"
NOTHING = "I found nothing in the indexed code that matches this question."


def extractive_answer(
    weights: Mapping[str, float],
    sources: Sequence[Source],
    permalink: Permalink,
    *,
    not_covered: str = "",
) -> tuple[str, tuple[Citation, ...]]:
    """`weights`: the question's tokens and how much each counts when picking lines;
    `not_covered`: the sentence saying what the code does not mention ("" when it does)."""
    if not sources:
        return NOTHING, ()
    parts = [f"{not_covered}; the nearest places are:" if not_covered else NO_MODEL]
    citations: list[Citation] = []
    for source in sources[:MAX_PLACES]:
        excerpt = best_excerpt(source, weights)
        cite = to_citation(excerpt, permalink)
        citations.append(cite)
        what = f" `{source.symbol}`" if source.symbol else ""
        parts.append(
            f"**{cite.label}**{what} ({source.repo})\n```{_fence_lang(source)}\n{excerpt.text}\n```"
        )
    return "\n\n".join(parts), tuple(citations)


def _fence_lang(source: Source) -> str:
    return {"csharp": "cs", "text": "", "markdown": "md"}.get(source.language, source.language)
