"""The answer given when no model is configured: the best places, with short excerpts.

Each excerpt is the window of a source where the question's terms are
densest, cited with its own exact lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.answer.citations import Permalink, to_citation
from bot.models import Citation
from bot.retrieval.retriever import Source
from bot.text.tokens import code_tokens

MAX_PLACES = 5
EXCERPT_LINES = 8
NO_MODEL = "No language model is configured, so here are the most relevant places in the code:"
NOTHING = "I found nothing in the indexed code that matches this question."


def extractive_answer(
    terms: Sequence[str], sources: Sequence[Source], permalink: Permalink
) -> tuple[str, tuple[Citation, ...]]:
    if not sources:
        return NOTHING, ()
    wanted = set(terms)
    parts = [NO_MODEL]
    citations: list[Citation] = []
    for source in sources[:MAX_PLACES]:
        excerpt = _best_window(source, wanted)
        cite = to_citation(excerpt, permalink)
        citations.append(cite)
        what = f" `{source.symbol}`" if source.symbol else ""
        parts.append(
            f"**{cite.label}**{what} ({source.repo})\n```{_fence_lang(source)}\n{excerpt.text}\n```"
        )
    return "\n\n".join(parts), tuple(citations)


def _best_window(source: Source, wanted: set[str]) -> Source:
    lines = source.text.split("\n")
    if len(lines) <= EXCERPT_LINES:
        return source
    hits = [len(wanted.intersection(code_tokens(line))) for line in lines]
    best_start, best = 0, -1
    window = sum(hits[:EXCERPT_LINES])
    for start in range(len(lines) - EXCERPT_LINES + 1):
        if start:
            window += hits[start + EXCERPT_LINES - 1] - hits[start - 1]
        if window > best:
            best_start, best = start, window
    chosen = lines[best_start : best_start + EXCERPT_LINES]
    while chosen and not chosen[-1].strip():
        chosen.pop()
    first = source.start_line + best_start
    return Source(
        source.repo,
        source.path,
        source.language,
        first,
        first + max(len(chosen), 1) - 1,
        source.symbol,
        "\n".join(chosen),
        source.score,
    )


def _fence_lang(source: Source) -> str:
    return {"csharp": "cs", "text": "", "markdown": "md"}.get(source.language, source.language)
