from bot.answer.extractive import NO_MODEL, NOTHING, extractive_answer
from bot.retrieval.retriever import Source


def test_excerpt_shows_the_matching_lines_with_exact_numbers():
    lines = [f"line {i}" for i in range(1, 41)]
    lines[29] = "def retry_webhook(event):"
    lines[30] = "    return retry(event)"
    src = Source("demo", "hooks.py", "python", 101, 140, "retry_webhook", "\n".join(lines), 1.0)
    weights = {"retry": 1.0, "webhook": 1.0, "retry_webhook": 2.0}
    text, cites = extractive_answer(weights, [src], lambda s: "")
    assert text.startswith(NO_MODEL)
    (cite,) = cites
    assert cite.start_line <= 130 <= cite.end_line  # line 30 of the block is file line 130
    assert cite.end_line - cite.start_line < 8
    assert "def retry_webhook(event):" in text
    assert f"**{cite.label}**" in text


def test_not_covered_leads_and_the_nearest_places_follow():
    src = Source("demo", "db.py", "python", 1, 2, "connect", "def connect():\n    pass", 1.0)
    sentence = "The indexed code does not seem to mention PostgreSQL"
    text, cites = extractive_answer({"connect": 1.0}, [src], lambda s: "", not_covered=sentence)
    first, _, rest = text.partition("\n\n")
    assert first == "The indexed code does not seem to mention PostgreSQL; the nearest places are:"
    assert NO_MODEL not in text
    assert rest.startswith("**db.py:L1-L2** `connect` (demo)")
    assert [c.label for c in cites] == ["db.py:L1-L2"]


def test_no_sources():
    assert extractive_answer({"x": 1.0}, [], lambda s: "") == (NOTHING, ())
