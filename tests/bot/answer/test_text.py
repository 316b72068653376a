import random

from bot.answer.text import link_citations, split_message
from bot.models import Citation
from tests.support.prose import long_paragraph


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


def _streamed_text() -> str:
    code = (
        "```python\n" + "\n".join(f"step_{i} = deliver(attempt={i})" for i in range(80)) + "\n```"
    )
    prose = "The loop backs off between attempts. " * 12
    return "\n\n".join([prose, code, prose, "short line", code, prose])


def test_filled_pieces_stay_put_while_the_text_grows():
    text = _streamed_text()
    final = split_message(text, 500, paragraphs=False)
    assert len(final) > 4
    for end in range(1, len(text) + 1, 7):
        pieces = split_message(text[:end], 500, paragraphs=False)
        # Every piece before the last is already final: a message that is full never changes.
        assert pieces[:-1] == final[: len(pieces) - 1], end
        # The last one only grows; at most its unfinished line moves on to the next piece.
        head = pieces[-1].rsplit("\n", 1)[0].rstrip("\n")
        assert final[len(pieces) - 1].startswith(head), end
        for piece in pieces:
            assert len(piece) <= 500


def test_filled_pieces_keep_fences_and_lose_nothing():
    text = _streamed_text()
    pieces = split_message(text, 500, paragraphs=False)
    paragraph_pieces = split_message(text, 500)
    assert len(pieces) <= len(paragraph_pieces)  # filling never takes more messages
    for piece in pieces:
        assert _balanced(piece), piece
    reopened = sum(p.startswith("```python") for p in pieces[1:])
    assert reopened >= 2  # the blocks straddle pieces and reopen with their language
    joined = "\n".join(pieces)
    for i in range(80):
        assert joined.count(f"step_{i} = deliver(attempt={i})") == 2


def test_a_paragraph_longer_than_the_limit_is_split_between_words():
    paragraph = long_paragraph(9000)
    for limit in (2000, 2900, 500):
        for paragraphs in (True, False):
            pieces = split_message(paragraph, limit, paragraphs=paragraphs)
            assert len(pieces) > 2
            assert all(len(p) <= limit for p in pieces)
            # Word for word the same: no word was cut in two across pieces.
            assert [w for p in pieces for w in p.split()] == paragraph.split(), limit
            # Each piece is one line: the paragraph is not broken inside a piece.
            assert all("\n" not in p for p in pieces), limit


def test_a_long_paragraph_between_others_keeps_its_neighbours_whole():
    paragraph = long_paragraph(5000)
    text = f"First, a short paragraph.\n\n{paragraph}\n\nLast words here."
    pieces = split_message(text, 2000)
    assert pieces[0].startswith("First, a short paragraph.")
    assert pieces[-1].endswith("Last words here.")
    assert [w for p in pieces for w in p.split()] == text.split()


def test_a_long_line_in_code_is_cut_at_a_space_and_its_block_reopened():
    line = "values = [" + ", ".join(f"item_{i}" for i in range(400)) + "]"
    text = f"```python\n{line}\n```"
    pieces = split_message(text, 500)
    assert len(pieces) > 3
    for piece in pieces:
        assert len(piece) <= 500
        assert _balanced(piece)
    body = [w for p in pieces for w in p.split() if not w.startswith("```")]
    assert body == line.split()
