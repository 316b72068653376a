"""The terminal chat: a REPL over the core that keeps the conversation.

On a terminal it edits lines and keeps a history (`adapters.cli.prompt`); piped
(`echo "..." | codecite chat`) it reads one question a line and echoes each before
its answer. `/help` lists the chat commands, generated from the command table
(`bot.commands`), plus the chat's own `/reset` and `/quit`. A `--repo` scope
applies to everything asked in the session: questions, `/map`, `/repos`,
`/status`, `/reindex`.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TextIO

from rich.console import Console
from rich.text import Text

from adapters.cli.logs import PRINTED
from adapters.cli.plain import say
from adapters.cli.prompt import LineReader
from adapters.cli.render import print_answer, print_streamed
from adapters.cli.status import StatusLine
from adapters.common.errors import user_facing
from bot.commands import ASK, BY_NAME, COMMANDS, REINDEX, Command, Syntax
from bot.core import CLI, Context, Core
from bot.errors import BotError
from bot.models import Turn

CHAT = Syntax("/{}", "type a question", threads=False)
OWN = {"reset": "forget the conversation so far", "quit": "leave the chat (Ctrl-D too)"}
LEAVE = ("quit", "exit")
MAX_TURNS = 12
HISTORY_FILE = "chat_history"
PROMPT = "you> "


def help_text(scope: frozenset[str] | None = None) -> str:
    """The chat's commands, from the command table, in the chat's syntax."""
    rows = [(CHAT.command(spec), spec.summary) for spec in COMMANDS if spec is not ASK]
    rows += [(CHAT.template.format(name), what) for name, what in OWN.items()]
    width = max(len(usage) for usage, _ in rows)
    lines = ["Type a question and press Enter; follow-ups keep the conversation."]
    lines += [f"  {usage:<{width}}  {what}" for usage, what in rows]
    if scope:
        lines.append(f"This chat sees only {', '.join(sorted(scope))} (--repo).")
    return "\n".join(lines)


def command_words() -> list[str]:
    """What Tab completes: every chat command."""
    return [f"/{spec.name}" for spec in COMMANDS if spec is not ASK] + [f"/{n}" for n in OWN]


def run_chat(
    core: Core,
    console: Console,
    *,
    scope: frozenset[str] | None = None,
    stdin: TextIO | None = None,
) -> int:
    ctx = replace(CLI, repos=scope) if scope else CLI
    lines = LineReader(
        stdin or sys.stdin,
        prompt=_styled(console, PROMPT),
        history=core.settings.home / HISTORY_FILE,
        words=command_words(),
    )
    session = ChatSession(core, console, ctx)
    if lines.interactive:
        say(console, "codecite chat: type a question; /help lists the commands, Ctrl-D leaves.")
        if scope:
            say(console, f"This chat sees only {', '.join(sorted(scope))} (--repo).", style="dim")
    for text in lines:
        if not lines.interactive:
            say(console, f"{PROMPT}{text}", style="bold")
        if not session.handle(text):
            break
    return 0


class ChatSession:
    """One conversation: questions with their history, and the chat commands."""

    def __init__(self, core: Core, console: Console, ctx: Context) -> None:
        self._core = core
        self._console = console
        self._ctx = ctx
        self._history: list[Turn] = []

    def handle(self, text: str) -> bool:
        """Answer `text` (a question or a /command); False when the chat should end."""
        try:
            if text.startswith("/"):
                return self._command(text[1:].strip())
            self._ask(text)
        except KeyboardInterrupt:  # Ctrl-C stops this answer, not the chat
            self._console.file.write("\n")
            say(self._console, "stopped", style="dim")
        except BotError as exc:
            say(self._console, exc.user_message, style="red")
        except Exception as exc:  # noqa: BLE001 - the chat survives any one failed question
            say(self._console, user_facing(exc, extra=PRINTED), style="red")
        return True

    def _ask(self, text: str) -> None:
        core, live = self._core, self._core.settings.stream_answers
        with StatusLine(self._console) as status:
            stream = core.ask_stream(text, self._ctx, self._history, progress=status)
            answer = print_streamed(self._console, stream, status, live=live)
        turns = [*self._history, Turn("user", text), Turn("assistant", answer.text)]
        self._history = turns[-MAX_TURNS:]

    def _command(self, line: str) -> bool:
        word, _, argument = line.partition(" ")
        word = word.lower()
        if word in LEAVE:
            return False
        if word == "reset":
            self._history.clear()
            say(self._console, "conversation cleared", style="dim")
            return True
        spec = BY_NAME.get(word)
        if spec is None:
            say(self._console, f"There is no /{word} command; /help lists them.")
        elif spec is ASK:  # `/ask <question>` is a question
            if argument.strip():
                self._ask(argument.strip())
            else:
                say(self._console, help_text(self._ctx.repos))
        elif spec.name == "help":
            say(self._console, help_text(self._ctx.repos))
        else:
            self._run(Command(spec, argument.strip()))
        return True

    def _run(self, command: Command) -> None:
        core, console = self._core, self._console
        if command.spec is REINDEX:  # the terminal ingests here and waits, like `reindex`

            def notice(text: str) -> None:
                say(console, text, style="dim")

            later = core.reindex(command.argument or None, self._ctx, inline=True, on_wait=notice)
            say(console, later.result())
            return
        result = core.run_command(command, self._ctx, CHAT)
        if result.answer is not None:
            print_answer(console, result.answer)
        else:
            say(console, result.final_text())


def _styled(console: Console, prompt: str) -> str:
    """The prompt as the terminal shows it (bold cyan where it has colour)."""
    if not console.is_terminal:
        return prompt
    with console.capture() as captured:
        console.print(Text(prompt.rstrip(), style="bold cyan"), end="")
    return captured.get() + " "
