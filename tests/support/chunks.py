"""What every chunking result must satisfy, whatever the language or budget."""

from __future__ import annotations

from collections.abc import Sequence

from bot.code.chunking import KINDS, ChunkBudget
from bot.models import Span


def assert_well_formed(text: str, spans: Sequence[Span], budget: ChunkBudget) -> None:
    """In range, sorted, disjoint (bar windows of one piece), within budget, covering the text."""
    lines = text.splitlines()
    covered = [False] * (len(lines) + 1)
    previous: Span | None = None
    for span in spans:
        assert 1 <= span.start_line <= span.end_line <= len(lines), span
        assert span.kind in KINDS, span
        assert lines[span.start_line - 1].strip(), f"{span} starts on a blank line"
        assert lines[span.end_line - 1].strip(), f"{span} ends on a blank line"
        body = lines[span.start_line - 1 : span.end_line]
        if len(body) > 1:  # a single line cannot be cut, however long
            assert len(body) <= budget.max_lines, span
            assert sum(len(line) + 1 for line in body) <= budget.max_chars, span
        if previous is not None:
            assert span.start_line > previous.start_line, (previous, span)
            if span.start_line <= previous.end_line:  # only windows of one piece overlap
                same = (span.kind, span.symbol, span.header)
                assert same == (previous.kind, previous.symbol, previous.header), (previous, span)
                assert previous.end_line - span.start_line < budget.window_overlap, (previous, span)
        covered[span.start_line : span.end_line + 1] = [True] * len(body)
        previous = span
    missed = [n for n, line in enumerate(lines, 1) if line.strip() and not covered[n]]
    assert not missed, f"lines not in any chunk: {missed[:10]}"
