from bot.answer.extractive import NO_MODEL, NOTHING, extractive_answer
from bot.retrieval.retriever import Source


def test_excerpt_is_the_densest_window_with_exact_lines():
    lines = [f"line {i}" for i in range(1, 41)]
    lines[29] = "def retry_webhook(event):"
    lines[30] = "    return retry(event)"
    src = Source("demo", "hooks.py", "python", 101, 140, "retry_webhook", "\n".join(lines), 1.0)
    text, cites = extractive_answer(["retry", "webhook"], [src], lambda s: "")
    assert text.startswith(NO_MODEL)
    (cite,) = cites
    assert cite.start_line <= 130 <= cite.end_line  # line 30 of the block is file line 130
    assert cite.end_line - cite.start_line < 8
    assert "def retry_webhook(event):" in text
    assert f"**{cite.label}**" in text


def test_no_sources():
    assert extractive_answer(["x"], [], lambda s: "") == (NOTHING, ())
