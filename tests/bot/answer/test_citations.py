from bot.answer.citations import resolve_citations
from bot.retrieval.retriever import Source


def _src(path: str, start: int, end: int) -> Source:
    return Source("demo", path, "python", start, end, "", "x", 1.0)


SOURCES = [_src("a.py", 1, 10), _src("b.py", 5, 9)]


def link(s: Source) -> str:
    return f"https://h/{s.path}#L{s.start_line}"


def test_markers_become_labels_in_first_use_order():
    text, cites = resolve_citations("B does it [2], with help from A [1][2].", SOURCES, link)
    assert text == "B does it (b.py:L5-L9), with help from A (a.py:L1-L10) (b.py:L5-L9)."
    assert [c.label for c in cites] == ["b.py:L5-L9", "a.py:L1-L10"]
    assert cites[0].url == "https://h/b.py#L5"


def test_unknown_source_numbers_are_dropped():
    text, cites = resolve_citations("Made up [7] and real [1, 9].", SOURCES, link)
    assert "[7]" not in text and "7" not in text
    assert [c.label for c in cites] == ["a.py:L1-L10"]


def test_citation_paths_come_from_metadata_not_model_text():
    _, cites = resolve_citations("See secret.py:L1-L99 [1]", SOURCES, link)
    assert [c.path for c in cites] == ["a.py"]
