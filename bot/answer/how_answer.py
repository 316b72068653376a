"""How-it-works answers: the path through the code first, then a few focused excerpts.

The path (`bot.retrieval.howpath`) is shown as one line, each step cited where it is
called (`Mux.routeHTTP → node.FindRoute (tree.go:L475) → node.findRoute`); then up to
`MAX_EXCERPTS` excerpts, one per step, each labelled with the one definition its lines
belong to and cut around what the question asks and the call to the next step. With a
model, the same steps are its first sources and the path line is one of the facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.answer.citations import Permalink, to_citation
from bot.answer.excerpts import best_excerpt
from bot.answer.labels import excerpt_block, one_definition
from bot.models import Citation, line_label
from bot.retrieval.dirtree import one_line
from bot.retrieval.howpath import HowPath, Step, delegates
from bot.retrieval.retriever import Source
from bot.text.tokens import code_tokens

MAX_EXCERPTS = 3
STEP_SOURCE_LINES = 60  # a step given to the model is cut to this many lines around its point
ARROW = " → "


def path_line(path: HowPath) -> str:
    """`A` → `B` (file:L88) → `C`: each step after the first cited where it is called."""
    parts = [f"`{path.entry.definition.symbol}`"]
    for before, step in zip(path.steps, path.steps[1:], strict=False):
        at = line_label(before.definition.path, step.called_at, step.called_at)
        parts.append(f"`{step.definition.symbol}` ({at})")
    return one_line(ARROW.join(parts))


def step_weights(path: HowPath, weights: Mapping[str, float]) -> list[dict[str, float]]:
    """Per step, the question's weights plus the name of the call to the next step, weighed
    above any word, so the excerpt shows that call."""
    top = max(weights.values(), default=1.0) + 1.0
    out = []
    for i, _ in enumerate(path.steps):
        own = dict(weights)
        if i + 1 < len(path.steps):
            for token in code_tokens(path.steps[i + 1].definition.name):
                own[token] = top
        out.append(own)
    return out


def step_excerpts(path: HowPath, weights: Mapping[str, float]) -> list[Source]:
    """The steps' excerpts in path order, thin wrappers left out (`post` → `method_is`: the
    path line cites the one call they make); past `MAX_EXCERPTS`, the calls that hold least
    of the question are left out (the first shown always stays)."""
    per_step = step_weights(path, weights)
    keep = list(range(len(path.steps)))
    wrappers = [i for i in keep[:-1] if delegates(path.steps[i].source)]
    keep = [i for i in keep if i not in wrappers]  # the path line shows their one call
    while len(keep) > MAX_EXCERPTS:
        keep.remove(min(keep[1:], key=lambda i: path.steps[i].relevance))
    return [best_excerpt(path.steps[i].source, per_step[i]) for i in keep]


def how_answer(
    path: HowPath,
    weights: Mapping[str, float],
    permalink: Permalink,
    others: Sequence[Source] = (),
) -> tuple[str, tuple[Citation, ...]]:
    """The extractive how-answer: the path, then its excerpts, each cited by its own lines;
    a path of one step is followed by the best of `others` (other places above the floor)."""
    if len(path.steps) > 1:
        lead = f"The path through the code: {path_line(path)}"
    else:
        lead = f"This happens in `{one_line(path.entry.definition.symbol)}`:"
    shown = [(e, e.symbol) for e in step_excerpts(path, weights)]
    steps = [s.source for s in path.steps]
    extra = [s for s in others if not any(_overlaps(s, step) for step in steps)]
    for block in extra[: MAX_EXCERPTS - len(shown)]:
        excerpt = best_excerpt(block, weights)
        shown.append((excerpt, one_definition(block, excerpt)))
    citations: list[Citation] = []
    parts = [lead]
    for excerpt, symbol in shown:
        cite = to_citation(excerpt, permalink)
        citations.append(cite)
        parts.append(excerpt_block(cite.label, symbol, excerpt))
    return "\n\n".join(parts), tuple(citations)


def how_sources(path: HowPath, sources: Sequence[Source]) -> list[Source]:
    """What the model reads: the path's steps first (each cut near its point), then the
    retrieved sources that do not repeat them."""
    steps = [_for_model(s) for s in path.steps]
    rest = [s for s in sources if not any(_overlaps(s, step) for step in steps)]
    return [*steps, *rest]


def path_facts(path: HowPath, sources: Sequence[Source]) -> str:
    """The path as a fact for the prompt, each step with the source number holding it."""
    numbered = []
    for step in path.steps:
        n = next(
            (i for i, s in enumerate(sources, 1) if _holds(s, step.definition.start_line, step)),
            0,
        )
        numbered.append(f"`{step.definition.symbol}`" + (f" [{n}]" if n else ""))
    return one_line("- The call path for this question: " + ARROW.join(numbered))


def _for_model(step: Step) -> Source:
    source = step.source
    lines = source.text.split("\n")
    if len(lines) <= STEP_SOURCE_LINES:
        return source
    last = STEP_SOURCE_LINES - 1
    return replace(
        source,
        end_line=source.start_line + last,
        text="\n".join(lines[: last + 1]),
    )


def _overlaps(a: Source, b: Source) -> bool:
    return (
        a.repo == b.repo
        and a.path == b.path
        and a.start_line <= b.end_line
        and b.start_line <= a.end_line
    )


def _holds(source: Source, line: int, step: Step) -> bool:
    return (
        source.repo == step.definition.repo
        and source.path == step.definition.path
        and source.start_line <= line <= source.end_line
    )
