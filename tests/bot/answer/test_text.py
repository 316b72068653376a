import random

from bot.answer.text import link_citations, split_message
from bot.models import Citation


def _balanced(piece: str) -> bool:
    return sum(1 for line in piece.splitlines() if line.strip().startswith("```")) % 2 == 0


def test_short_text_untouched():
    assert split_message("hello", 100) == ["hello"]


def test_split_respects_limit_and_fences():
    code = "```python\n" + "\n".join(f"x_{i} = compute({i})" for i in range(200)) + "\n```"
    text = "Intro paragraph.\n\n" + code + "\n\nOutro paragraph " + "word " * 100
    pieces = split_message(text, 500)
    assert len(pieces) > 3
    for piece in pieces:
        assert len(piece) <= 500
        assert _balanced(piece), piece
    # reopened fences keep their language
    assert sum(p.count("```python") for p in pieces) >= 2
    # nothing lost
    joined = "\n".join(pieces)
    for i in range(200):
        assert f"x_{i} = compute({i})" in joined


def test_random_markdown_always_valid():
    rnd = random.Random(7)
    for _ in range(50):
        parts = []
        for _ in range(rnd.randint(1, 30)):
            if rnd.random() < 0.3:
                parts.append(
                    "```\n" + "\n".join("code " * rnd.randint(1, 30) for _ in range(5)) + "\n```"
                )
            else:
                parts.append("text " * rnd.randint(1, 120))
        text = "\n\n".join(parts)
        limit = rnd.choice([120, 400, 2000])
        for piece in split_message(text, limit):
            assert len(piece) <= limit
            assert _balanced(piece)


def test_very_long_line_cut_hard():
    pieces = split_message("x" * 1000, 100)
    assert all(len(p) <= 100 for p in pieces)
    assert "".join(pieces) == "x" * 1000


def test_link_citations_outside_code_only():
    cite = Citation("r", "a.py", 1, 3, "https://h/a.py#L1-L3")
    text = "See a.py:L1-L3.\n```\na.py:L1-L3\n```"
    out = link_citations(text, [cite], lambda label, url: f"<{url}|{label}>")
    assert out.startswith("See <https://h/a.py#L1-L3|a.py:L1-L3>.")
    assert out.endswith("```\na.py:L1-L3\n```")


def test_link_citations_without_urls_is_identity():
    cite = Citation("r", "a.py", 1, 3, "")
    assert link_citations("a.py:L1-L3", [cite], lambda label, url: "X") == "a.py:L1-L3"


def test_link_citations_matches_whole_labels_only():
    short = Citation("r", "a.py", 3, 3, "https://h/a.py#L3")
    longer = Citation("r", "a.py", 30, 40, "https://h/a.py#L30-L40")
    text = "See a.py:L3 and a.py:L30-L40, not xa.py:L3 or lib/a.py:L3."
    out = link_citations(text, [short], lambda label, url: f"<{url}|{label}>")
    assert out == "See <https://h/a.py#L3|a.py:L3> and a.py:L30-L40, not xa.py:L3 or lib/a.py:L3."
    both = link_citations(text, [short, longer], lambda label, url: f"[{label}]")
    assert both.startswith("See [a.py:L3] and [a.py:L30-L40],")
