"""The terminal chat: a REPL over the core that keeps the conversation.

Reads questions line by line from stdin, so it works interactively and when
a question is piped in (`echo "..." | codecite chat`).
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from adapters.cli.render import print_answer, print_streamed
from adapters.cli.status import StatusLine
from adapters.common.errors import user_facing
from bot.commands import ASK, REINDEX, Syntax, command_list, parse
from bot.core import CLI, Core
from bot.errors import BotError
from bot.models import Turn

CHAT = Syntax("/{}", "type a question; `/reset` forgets the conversation", threads=False)
HELP = (
    "Ask about the indexed code. "
    f"Commands: {command_list(CHAT, ('map', 'status', 'repos'))}, "
    "/reset (forget the conversation), /quit."
)
MAX_TURNS = 12


def run_chat(
    core: Core,
    console: Console,
    *,
    scope: frozenset[str] | None = None,
    stdin: TextIO | None = None,
) -> int:
    source = stdin or sys.stdin
    interactive = source.isatty()
    if interactive:
        console.print(f"[bold]codecite[/bold] — {escape(HELP)}")  # `[repo]` is text
    history: list[Turn] = []
    while True:
        if interactive:
            console.print("[bold cyan]you>[/bold cyan] ", end="")
        line = source.readline()
        if not line:
            return 0
        text = line.strip()
        if not text:
            continue
        if text in ("/quit", "/exit"):
            return 0
        if text == "/reset":
            history.clear()
            console.print("[dim]conversation cleared[/dim]")
            continue
        if text.startswith("/"):
            _command(core, console, text[1:])
            continue
        if not interactive:
            console.print(f"[bold cyan]you>[/bold cyan] {text}", highlight=False)
        try:
            with StatusLine(console) as status:
                stream = core.ask_stream(text, CLI, history, repos=scope, progress=status)
                answer = print_streamed(console, stream, status, live=core.settings.stream_answers)
        except BotError as exc:
            console.print(f"[red]{exc.user_message}[/red]", highlight=False)
            continue
        except Exception as exc:  # noqa: BLE001 - the chat survives any one failed question
            console.print(f"[red]{user_facing(exc)}[/red]", highlight=False)
            continue
        history = [*history, Turn("user", text), Turn("assistant", answer.text)][-MAX_TURNS:]


def _command(core: Core, console: Console, line: str) -> None:
    command = parse(line)
    if command.spec is ASK or not line.strip():  # `/ask` and unknown words: the help line
        console.print(HELP, highlight=False, markup=False)
        return
    try:
        if command.spec is REINDEX:  # the terminal ingests here and waits, like `reindex`
            report = core.reindex(command.argument or None, CLI, inline=True).result()
            console.print(report, highlight=False, markup=False)
            return
        result = core.run_command(command, CLI, CHAT)
        text = result.final_text()
    except BotError as exc:
        console.print(exc.user_message, highlight=False, markup=False)
        return
    if result.answer is not None:
        print_answer(console, result.answer)
    else:
        console.print(text or HELP, highlight=False, markup=False)
