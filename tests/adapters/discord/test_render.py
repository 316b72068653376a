"""Rendering answers for Discord: links, footer, mass-mention safety and splitting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adapters.discord.render import (
    MESSAGE_LIMIT,
    NOTES,
    ZWSP,
    neutralise_mentions,
    quote_question,
    render_answer,
    render_partial,
    render_text,
    strip_footer,
    strip_mention,
    thread_name,
)
from adapters.slack.render import MAX_SOURCES
from bot.models import Answer, ChangeRef, Citation, Freshness
from tests.support.prose import long_paragraph

URL = "https://github.com/acme/demo/blob/abc1234/src/hooks.py#L6-L12"
NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def answer(text: str, *citations: Citation) -> Answer:
    fresh = Freshness("demo", "main", "abc1234def", NOW - timedelta(minutes=12), NOW)
    return Answer(text=text, citations=citations, freshness=(fresh,))


def cite(path: str, start: int, end: int, url: str = "") -> Citation:
    return Citation("demo", path, start, end, url)


def fences_balanced(piece: str) -> bool:
    return sum(1 for line in piece.splitlines() if line.lstrip().startswith("```")) % 2 == 0


def test_permalinks_become_masked_links_without_previews() -> None:
    pieces = render_answer(
        answer("Retries happen in (src/hooks.py:L6-L12).", cite("src/hooks.py", 6, 12, URL))
    )
    assert pieces == [
        f"Retries happen in ([src/hooks.py:L6-L12](<{URL}>)).\n\n"
        "-# demo main@abc1234, indexed 12 min ago"
    ]


def test_local_citations_are_code_spans_and_backticked_labels_still_link() -> None:
    local = cite("lib/x.py", 3, 3)
    linked = cite("src/hooks.py", 6, 12, URL)
    text = "See `src/hooks.py:L6-L12` and lib/x.py:L3."
    body = render_answer(answer(text, local, linked))[0]
    assert f"[src/hooks.py:L6-L12](<{URL}>)" in body
    assert "`lib/x.py:L3`" in body
    assert "``" not in body


def test_link_text_is_escaped_and_url_cannot_break_out() -> None:
    c = cite("docs/[draft]_notes.md", 1, 2, "https://example.com/a b>c")
    body = render_answer(answer("In docs/[draft]_notes.md:L1-L2.", c))[0]
    assert r"[docs/\[draft\]\_notes.md:L1-L2](<https://example.com/a%20b%3Ec>)" in body


def test_labels_inside_code_fences_stay_plain() -> None:
    text = "```\nsrc/hooks.py:L6-L12\n```\nsrc/hooks.py:L6-L12"
    body = render_answer(answer(text, cite("src/hooks.py", 6, 12, URL)))[0]
    assert body.startswith("```\nsrc/hooks.py:L6-L12\n```\n[src/hooks.py:L6-L12]")


def test_mass_mentions_are_neutralised_everywhere() -> None:
    assert neutralise_mentions("hi @everyone and @here, @Everyone") == (
        f"hi @{ZWSP}everyone and @{ZWSP}here, @{ZWSP}Everyone"
    )
    body = render_answer(answer("ping @everyone"), question="tell @here")[0]
    assert "@everyone" not in body and "@here" not in body


def test_long_answer_splits_under_the_limit_with_balanced_fences() -> None:
    lines = [f"value_{i} = compute({i})  # one step of the loop" for i in range(60)]
    block = "```python\n" + "\n".join(lines) + "\n```"  # ~2,600 chars: must split inside
    prose = "Explanation of the retry loop and its backoff. " * 8
    text = "\n\n".join([prose, block, prose, block, prose, block])
    assert len(text) > 5000
    pieces = render_answer(answer(text, cite("src/hooks.py", 6, 12, URL)))
    assert len(pieces) >= 3
    for piece in pieces:
        assert 0 < len(piece) < MESSAGE_LIMIT
        assert fences_balanced(piece)
    joined = "\n".join(pieces)
    for line in lines:
        assert joined.count(line) == 3  # nothing lost, nothing repeated
    assert pieces[-1].endswith("-# demo main@abc1234, indexed 12 min ago")


def test_slash_question_is_quoted_on_one_line_and_truncated() -> None:
    assert quote_question("where\n\ndo we   retry?") == "> where do we retry?"
    quoted = quote_question("x" * 1000)
    assert len(quoted) < 320 and quoted.endswith("…")


def test_text_helpers() -> None:
    assert strip_mention("<@42> where? <@!42>", 42) == "where?"
    assert strip_mention("<@421> hi", 42) == "<@421> hi"
    assert strip_footer("answer\n\n-# demo main@abc, indexed just now") == "answer"
    assert thread_name("\n  how do retries work?\nmore") == "how do retries work?"
    assert len(thread_name("y" * 500)) <= 90
    assert thread_name("   ") == "codecite answer"
    assert render_text("") == ["(no answer)"]


def test_a_partial_answer_shows_an_open_code_block_closed_and_the_question_first() -> None:
    partial = "The loop:\n\n```python\ndef retry():\n    deliver()"
    pieces = render_partial(partial, question="how do we retry?")
    assert pieces == ["> how do we retry?\n\n" + partial + "\n```"]
    assert render_partial("Plain @everyone text") == [f"Plain @{ZWSP}everyone text"]


def test_every_prefix_of_a_long_streamed_answer_fits_and_keeps_full_messages() -> None:
    lines = [f"value_{i} = compute({i})  # one step of the loop" for i in range(60)]
    block = "```python\n" + "\n".join(lines) + "\n```"
    text = "\n\n".join(["Explanation of the retry loop. " * 30, block, "More prose. " * 20, block])
    final = render_partial(text)
    assert len(final) >= 3
    for end in range(1, len(text) + 1, 11):
        pieces = render_partial(text[:end])
        assert pieces[:-1] == final[: len(pieces) - 1]
        for piece in pieces:
            assert 0 < len(piece) <= MESSAGE_LIMIT
            assert fences_balanced(piece)


def test_a_not_covered_answer_reads_naturally() -> None:
    text = (
        "The indexed code does not seem to mention PostgreSQL or `pg_pool`; the nearest places"
        " are:\n\n**src/hooks.py:L6-L12** `retry` (demo)\n```python\ndef retry(event):\n```"
    )
    [body] = render_answer(answer(text, cite("src/hooks.py", 6, 12, URL)))
    assert body.split("\n")[:3] == [
        "The indexed code does not seem to mention PostgreSQL or `pg_pool`; the nearest places"
        " are:",
        "",
        f"**[src/hooks.py:L6-L12](<{URL}>)** `retry` (demo)",
    ]


def test_a_paragraph_over_the_message_limit_is_split_between_words() -> None:
    paragraph = long_paragraph(MESSAGE_LIMIT * 4)
    for streamed in (False, True):
        pieces = render_text(paragraph, streamed=streamed)
        assert len(pieces) >= 4
        assert all(len(piece) <= MESSAGE_LIMIT for piece in pieces)
        assert [w for piece in pieces for w in piece.split()] == paragraph.split()


def test_the_footer_names_as_many_commits_as_slack_and_counts_the_rest() -> None:
    def commit(n: int) -> Citation:
        sha = f"{n:02d}" + "ab" * 19
        ref = ChangeRef(sha, "2024-04-30", "Ann", f"Change {n}", url=f"https://h.test/c/{sha}")
        return Citation("demo", "a.py", 0, 0, ref.url, kind="commit", sha=sha, changed=ref)

    text = "\n".join(render_answer(answer("Commits.", *(commit(n) for n in range(11)))))
    notes = [line for line in text.splitlines() if line.startswith("-# [")]
    assert NOTES == MAX_SOURCES and len(notes) == NOTES
    assert [n[4:6] for n in notes] == [f"{n:02d}" for n in range(NOTES)]  # the answer's order
    assert f"-# …and {11 - NOTES} more" in text
