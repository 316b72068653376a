"""One command table: parsing for every adapter, help in each platform's syntax."""

from __future__ import annotations

import pytest

from bot.commands import (
    ASK,
    COMMANDS,
    FORGET,
    HELP,
    MAP,
    PLAIN,
    REINDEX,
    REPOS,
    STATUS,
    Command,
    Syntax,
    command_list,
    confirm_line,
    forget_target,
    help_text,
    parse,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", Command(HELP)),
        ("   ", Command(HELP)),
        ("help", Command(HELP)),
        ("STATUS", Command(STATUS)),
        ("status of the build", Command(STATUS, "of the build")),
        ("repos", Command(REPOS)),
        ("map", Command(MAP)),
        ("map  pay ", Command(MAP, "pay")),
        ("reindex shop", Command(REINDEX, "shop")),
        ("ask where do we retry?", Command(ASK, "where do we retry?")),
        ("Ask\twhy", Command(ASK, "why")),
        ("ask", Command(ASK, "")),
        ("where do we retry?", Command(ASK, "where do we retry?")),
        ("  mapping of users? ", Command(ASK, "mapping of users?")),  # not the word `map`
        ("forget", Command(FORGET)),
        ("FORGET  shop ", Command(FORGET, "shop")),
        ("forget shop YES", Command(FORGET, "shop YES")),
        # more than a name (and `yes`) after `forget`: a question, not a command
        ("forget shop now", Command(ASK, "forget shop now")),
        (
            "forget the cache: where do we retry?",
            Command(ASK, "forget the cache: where do we retry?"),
        ),
    ],
)
def test_parse(line: str, expected: Command) -> None:
    assert parse(line) == expected


def test_bare_quick_commands_are_what_a_mention_runs() -> None:
    assert [c for c in ("help", "status", "repos") if parse(c).is_bare_quick] == [
        "help",
        "status",
        "repos",
    ]
    assert not parse("status of the build").is_bare_quick
    assert not parse("map").is_bare_quick and not parse("reindex").is_bare_quick


def test_help_lists_every_command_of_the_table_in_the_platform_syntax() -> None:
    slack = Syntax("/codecite {}", "use `{ask}`")
    text = help_text(slack)
    for spec in COMMANDS:
        if spec is not ASK:
            assert f"• `/codecite {spec.usage}`: {spec.summary}" in text
    assert "• Ask: use `/codecite ask <question>`" in text
    assert "`/codecite reindex [repo]`: re-ingest now (admins only)" in text
    assert "Follow-ups" in text
    terminal = help_text(Syntax("codecite {}", "`{ask_name}`", threads=False))
    assert "• Ask: `codecite ask`" in terminal and "Follow-ups" not in terminal
    assert "/codecite" not in terminal


def test_forget_is_confirmed_by_its_line_in_each_platforms_words() -> None:
    assert forget_target("shop") == ("shop", False)
    assert forget_target("shop yes") == ("shop", True)
    assert forget_target("") == ("", False)
    assert confirm_line("shop") == "forget shop yes" and parse(confirm_line("shop")).argument
    assert PLAIN.confirmation("shop") == "`forget shop yes`"
    slack = Syntax("/codecite {}", "", confirm="the button below, or `{command}`")
    assert slack.confirmation("shop") == "the button below, or `/codecite forget shop yes`"
    terminal = Syntax("codecite {}", "", confirm="answer below (or `codecite forget {repo} --yes`)")
    assert terminal.confirmation("shop") == "answer below (or `codecite forget shop --yes`)"
    assert Syntax("/{}", "", confirm="mention me with `{line}`").confirmation("a") == (
        "mention me with `forget a yes`"
    )


def test_command_list_is_written_in_the_syntax() -> None:
    chat = Syntax("/{}", "")
    assert command_list(chat, ("map", "status")) == "/map [repo], /status"
    assert command_list(chat).split(", ")[0] == "/status"  # `ask` is not a listed command
