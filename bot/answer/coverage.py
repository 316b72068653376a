"""What an answer says when the indexed code does not seem to cover the question.

The verdict comes from retrieval (`bot.retrieval.relevance`). Without a model it
leads the extractive answer ("The indexed code does not seem to mention
PostgreSQL; the nearest places are: ..."). With a model, the words the scope
never mentions go into the prompt as a fact of codecite's own, and when the model
then declines with the standard sentence, that sentence is replaced by the
specific one. A model that answers anyway keeps its answer: it read the sources,
the verdict only counted words.

A question the symbol table speaks for (an exact answer, or "I found no
definition of that name") gets no second sentence.
"""

from __future__ import annotations

from bot.answer.prompts import NOT_ANSWERED
from bot.retrieval.relevance import not_covered_sentence
from bot.retrieval.retriever import Retrieval

MAX_ABSENT = 8  # words named to the model


def not_covered(retrieval: Retrieval) -> str:
    """The not-covered sentence (no final stop), or "" when the code covers the question."""
    facts = retrieval.symbols
    if not retrieval.sources or (facts is not None and (facts.answerable or facts.question.name)):
        return ""
    return not_covered_sentence(retrieval.coverage)


def absent_words(retrieval: Retrieval) -> tuple[str, ...]:
    """The question's words no indexed chunk in scope mentions, when that decides the answer."""
    if not not_covered(retrieval):
        return ()
    return tuple(c.surface for c in retrieval.coverage.missing[:MAX_ABSENT])


def explain_not_answered(text: str, sentence: str) -> str:
    """The model's "does not answer this" made specific ("does not seem to mention X")."""
    stripped = text.lstrip()
    if not sentence or not stripped.startswith(NOT_ANSWERED):
        return text
    return f"{sentence}.{stripped[len(NOT_ANSWERED) :]}"


def excerpt_weights(retrieval: Retrieval) -> dict[str, float]:
    """How much each question token counts when picking an excerpt's lines: its rarity in
    the scope where it was judged, 1.0 for the other words of a long question."""
    analysis = retrieval.analysis
    weights = dict.fromkeys((*analysis.terms, *analysis.exact_terms), 1.0)
    weights.update(retrieval.coverage.token_weights())
    return weights
