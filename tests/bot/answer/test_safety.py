from bot.answer.safety import LINK_REMOVED, MAX_ANSWER_CHARS, ZWSP, make_safe


def test_mass_and_role_pings_are_neutralised():
    text = "Hey @everyone and @here, <!channel> <!here|here> <!subteam^S123|devs> <@U123> <@&987654321>"
    safe = make_safe(text, [])
    for ping in (
        "@everyone",
        "@here",
        "<!channel>",
        "<!here",
        "<!subteam",
        "<@U123>",
        "<@&987654321>",
    ):
        assert ping not in safe
    assert f"@{ZWSP}everyone" in safe


def test_only_permalinks_and_source_links_survive():
    permalink = "https://github.com/acme/shop/blob/abc/shop/a.py#L1-L3"
    source = "# docs at https://docs.acme.dev/billing"
    text = (
        f"See {permalink}. Docs: https://docs.acme.dev/billing. "
        "Click https://evil.example/steal and [here](https://evil.example/x)."
    )
    safe = make_safe(text, [permalink], source)
    assert permalink in safe
    assert "https://docs.acme.dev/billing" in safe
    assert "evil.example" not in safe
    assert LINK_REMOVED in safe and "[here]" not in safe and "here" in safe


def test_length_is_bounded_with_fences_closed():
    text = "```python\n" + "x = 1\n" * 5000
    safe = make_safe(text, [])
    assert len(safe) <= MAX_ANSWER_CHARS + 100
    assert safe.count("```") % 2 == 0
    assert safe.endswith("(answer shortened)")
