"""Golden chunk boundaries for the polyglot fixture repo.

On a mismatch the test prints a unified diff. After checking a change by eye,
regenerate with `UPDATE_GOLDEN=1 pytest tests/ingest/test_chunking_golden.py`.
"""

from __future__ import annotations

from pathlib import Path

from bot.code.chunking import ChunkBudget, chunk_file
from bot.code.languages import language_for
from tests.support.golden import check_golden
from tests.support.paths import POLYGLOT

HERE = Path(__file__).resolve().parent
FIXTURES = POLYGLOT
GOLDEN = HERE / "golden" / "polyglot.txt"

# Smaller than the default so the small fixtures show splitting, merging and windows.
BUDGET = ChunkBudget(max_lines=20, max_chars=700, min_chars=160, window_lines=10, window_overlap=2)


def render() -> str:
    out = [
        "# Chunks of tests/fixtures/polyglot, one row per chunk: lines, kind, symbol.",
        "# Indented rows show the chunk's header (lines joined with ' / ').",
        f"# Budget: {BUDGET}",
        "# Regenerate: UPDATE_GOLDEN=1 pytest tests/ingest/test_chunking_golden.py",
    ]
    for path in sorted(FIXTURES.iterdir()):
        language = language_for(path.name)
        text = path.read_text(encoding="utf-8")
        out.append("")
        out.append(f"== {path.name} ({language}, {len(text.splitlines())} lines)")
        for span in chunk_file(path.name, text, language or "text", budget=BUDGET):
            lines = f"{span.start_line}-{span.end_line}"
            out.append(f"{lines:>9}  {span.kind:<9}  {span.symbol}".rstrip())
            if span.header:
                out.append(f"{'':>11}^ {span.header.replace(chr(10), ' / ')}")
    return "\n".join(out) + "\n"


def test_polyglot_chunks_match_golden() -> None:
    check_golden(GOLDEN, render(), "chunk boundaries")


def test_golden_covers_every_fixture_language() -> None:
    languages = {language_for(p.name) for p in FIXTURES.iterdir()}
    assert languages >= {
        "python", "javascript", "typescript", "tsx", "go", "java", "rust", "c", "cpp",
        "csharp", "ruby", "php", "markdown", "text",
    }  # fmt: skip
