from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adapters.slack.mrkdwn import to_mrkdwn
from adapters.slack.render import (
    FEEDBACK_BLOCK,
    SECTION_CHARS,
    VOTE_DOWN,
    VOTE_UP,
    quote_question,
    render_answer,
    render_text,
    sources_text,
)
from bot.models import Answer, Citation, Freshness
from tests.support.prose import long_paragraph

URL = "https://github.com/acme/shop/blob/3f2a9c1/shop/webhooks.py#L6-L12"
WEB = Citation("shop", "shop/webhooks.py", 6, 12, URL, symbol="retry_failed_webhooks")
LOCAL = Citation("shop", "shop/__init__.py", 1, 4, "")


def _answer(text: str, citations: tuple[Citation, ...] = (WEB,), mode: str = "llm") -> Answer:
    now = datetime.now(UTC)
    fresh = Freshness("shop", "main", "3f2a9c1e" * 5, now - timedelta(minutes=12), now)
    return Answer(text=text, citations=citations, freshness=(fresh,), mode=mode)  # type: ignore[arg-type]


def test_markdown_becomes_mrkdwn() -> None:
    md = "## Retry **logic**\nIt uses *backoff* and ~~no~~ [docs](https://x.test/a?b=1&c=2).\n- one"
    assert to_mrkdwn(md).split("\n") == [
        "*Retry logic*",
        "It uses _backoff_ and ~no~ <https://x.test/a?b=1&amp;c=2|docs>.",
        "• one",
    ]


def test_heading_keeps_a_trailing_hash_that_is_part_of_the_title() -> None:
    assert to_mrkdwn("## Using C#") == "*Using C#*"
    assert to_mrkdwn("# Title ##") == "*Title*"


def test_citation_labels_link_to_permalinks_and_local_labels_get_backticks() -> None:
    md = "Retries: `shop/webhooks.py:L6-L12`; package: shop/__init__.py:L1-L4."
    out = to_mrkdwn(md, (WEB, LOCAL))
    assert f"<{URL}|shop/webhooks.py:L6-L12>" in out
    assert "`shop/__init__.py:L1-L4`" in out
    assert "``" not in out  # no doubled backticks around a label that was already quoted


def test_code_is_escaped_not_formatted_and_fence_language_dropped() -> None:
    md = "```python\nif a < b and c**2:  # shop/webhooks.py:L6-L12\n```\nuse `x*y*z` here"
    out = to_mrkdwn(md, (WEB,))
    assert out.split("\n")[:3] == ["```", "if a &lt; b and c**2:  # shop/webhooks.py:L6-L12", "```"]
    assert "`x*y*z`" in out


def test_mentions_and_broadcasts_from_content_cannot_ping() -> None:
    out = to_mrkdwn("hey <!channel> and <@U123> & <https://evil.test|click>")
    assert "<!channel>" not in out and "<@U123>" not in out
    assert "&lt;!channel&gt;" in out and "&amp;" in out


def test_tables_are_shown_monospaced() -> None:
    out = to_mrkdwn("Limits:\n| a | b |\n|---|---|\n| 1 | 2 |\nafter")
    assert out.split("\n") == [
        "Limits:",
        "```",
        "| a | b |",
        "|---|---|",
        "| 1 | 2 |",
        "```",
        "after",
    ]


def test_short_answer_is_one_message_with_sources_freshness_and_buttons() -> None:
    [message] = render_answer(_answer("Retries are in shop/webhooks.py:L6-L12."), answer_id="a1")
    kinds = [b["type"] for b in message.blocks]
    assert kinds == ["section", "section", "context", "actions"]
    assert f"<{URL}|shop/webhooks.py:L6-L12>" in message.blocks[0]["text"]["text"]
    assert "*Sources*" in message.blocks[1]["text"]["text"]
    assert message.blocks[2]["elements"][0]["text"] == "shop main@3f2a9c1, indexed 12 min ago"
    actions = message.blocks[3]
    assert actions["block_id"] == FEEDBACK_BLOCK
    assert [(e["action_id"], e["value"]) for e in actions["elements"]] == [
        (VOTE_UP, "a1"),
        (VOTE_DOWN, "a1"),
    ]
    # The text alone (the plain fallback) still has the answer, sources and freshness.
    assert "shop/webhooks.py:L6-L12" in message.text and "indexed 12 min ago" in message.text


def test_no_answer_id_means_no_buttons_and_extractive_is_labelled() -> None:
    [message] = render_answer(_answer("x", mode="extractive"))
    assert [b["type"] for b in message.blocks] == ["section", "section", "context"]
    assert "no language model" in message.blocks[2]["elements"][0]["text"]


def test_long_answer_splits_within_slack_limits_and_keeps_fences_closed() -> None:
    code = (
        "```python\n" + "\n".join(f"value_{i} = compute({i})  # step" for i in range(400)) + "\n```"
    )
    prose = "\n\n".join(
        f"Paragraph {i}: shop/webhooks.py:L6-L12 explains it. " * 8 for i in range(40)
    )
    messages = render_answer(_answer(f"{prose}\n\n{code}\n\n{prose}"), answer_id="a1")
    assert len(messages) > 2
    for message in messages:
        assert len(message.blocks) <= 50
        assert len(message.text) <= 40_000
        for block in message.blocks:
            if block["type"] == "section":
                assert 0 < len(block["text"]["text"]) <= 3000
                assert block["text"]["text"].count("```") % 2 == 0
    assert all(b["type"] != "actions" for m in messages[:-1] for b in m.blocks)
    assert messages[-1].blocks[-1]["type"] == "actions"


def test_sources_are_deduplicated_and_capped() -> None:
    many = tuple(Citation("shop", f"f{i}.py", 1, 2, f"https://h.test/{i}") for i in range(12))
    text = sources_text((*many, many[0]))
    assert text.count("• ") == 8 and "…and 4 more" in text
    huge = tuple(Citation("r", f"f{i}.py", 1, 2, "https://h.test/" + "x" * 900) for i in range(8))
    assert len(sources_text(huge)) <= SECTION_CHARS


def test_quote_question_escapes_and_truncates() -> None:
    quoted = quote_question("U1", "is a < b?\nsecond line" + "x" * 600)
    lines = quoted.split("\n")
    assert lines[0] == "*<@U1> asked:*"
    assert lines[1] == "> is a &lt; b?"
    assert lines[2].startswith("> second line") and lines[2].endswith("…")


def test_render_text_for_commands() -> None:
    [message] = render_text("**Indexed**\n- shop main@3f2a9c1")
    assert message.text == "*Indexed*\n• shop main@3f2a9c1"
    assert message.blocks[0]["text"]["text"] == message.text


def test_a_not_covered_answer_reads_naturally() -> None:
    text = (
        "The indexed code does not seem to mention PostgreSQL or `pg_pool`; the nearest places"
        " are:\n\n**shop/webhooks.py:L6-L12** `retry_failed_webhooks` (shop)\n```python\n"
        "def retry_failed_webhooks(self, failures):\n```"
    )
    [message] = render_answer(_answer(text, mode="extractive"))
    first = message.blocks[0]["text"]["text"].split("\n")
    assert first[0] == (
        "The indexed code does not seem to mention PostgreSQL or `pg_pool`; the nearest places are:"
    )
    assert first[2] == f"*<{URL}|shop/webhooks.py:L6-L12>* `retry_failed_webhooks` (shop)"


def test_a_paragraph_over_the_section_limit_is_split_between_words() -> None:
    paragraph = long_paragraph(SECTION_CHARS * 5)
    messages = render_answer(_answer(paragraph, citations=()))
    sections = [b["text"]["text"] for m in messages for b in m.blocks if b["type"] == "section"]
    assert len(sections) >= 5
    assert all(len(text) <= SECTION_CHARS for text in sections)
    assert [w for text in sections for w in text.split()] == to_mrkdwn(paragraph).split()
