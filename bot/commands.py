"""The chat commands: one table, parsed once, written in each platform's own syntax.

    command = parse("map pay")            # Command(MAP, "pay")
    help_text(Syntax("/codecite {}", ...))  # the help of one platform

Every adapter parses what people type with `parse` and hands the `Command` to
`Core.run_command`; help, slash-command menus and hints are generated from
`COMMANDS`, with the prefix and the wording supplied by the adapter (`Syntax`).
Anything that is not a command word is a question.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

from bot.models import Answer


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One command: its name, its argument, and what it does (for help and command menus)."""

    name: str
    args: str  # "" | "[repo]" (optional) | "<question>" (required)
    summary: str  # a help line, lower case: "the repositories available here"
    description: str  # a command menu entry (Discord's slash list), capitalised
    arg_description: str = ""
    quick: bool = False  # plain text from stored state: no retrieval, no model
    admin_only: bool = False
    answers: bool = False  # the result is an Answer (citations, freshness)

    @property
    def arg_name(self) -> str:
        """`repo` for "[repo]", `question` for "<question>", "" without an argument."""
        return self.args.strip("[]<>")

    @property
    def usage(self) -> str:
        return f"{self.name} {self.args}" if self.args else self.name


_REPO_ARG = "Only this repository (default: every repository here)"

ASK = CommandSpec(
    "ask",
    "<question>",
    "ask a question about the indexed code",
    "Ask a question about the indexed code",
    "What you want to know, e.g. where do we retry webhooks?",
    answers=True,
)
STATUS = CommandSpec(
    "status",
    "",
    "what is indexed, at which commit, and how fresh",
    "What is indexed, at which commit, and how fresh",
    quick=True,
)
REPOS = CommandSpec(
    "repos",
    "",
    "the repositories available here",
    "The repositories this channel can see",
    quick=True,
)
MAP = CommandSpec(
    "map",
    "[repo]",
    "the directory tree and the most referenced symbols",
    "The directory tree and the most referenced symbols",
    _REPO_ARG,
    answers=True,
)
REINDEX = CommandSpec(
    "reindex",
    "[repo]",
    "re-ingest now",
    "Re-ingest repositories now",
    _REPO_ARG,
    admin_only=True,
)
FORGET = CommandSpec(
    "forget",
    "<repo>",
    "remove a repository from codecite, after asking",
    "Remove a repository from codecite, after asking",
    "The repository to forget",
    admin_only=True,
)
HELP = CommandSpec("help", "", "this message", "How to ask codecite about your code", quick=True)

COMMANDS: tuple[CommandSpec, ...] = (ASK, STATUS, REPOS, MAP, REINDEX, FORGET, HELP)
BY_NAME = {spec.name: spec for spec in COMMANDS}
ADMINS_ONLY = " (admins only)"


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed line: which command, and its argument ("" when none was given)."""

    spec: CommandSpec
    argument: str = ""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def is_bare_quick(self) -> bool:
        """`help`, `status`, `repos` alone: what a mention treats as a command, not a search."""
        return self.spec.quick and not self.argument


def parse(line: str) -> Command:
    """The command a line names; a line that names none is a question (`ask`).

    An empty line asks for help. The command word is matched case-insensitively
    and the argument is the rest of the line, stripped. `forget` takes a repository
    and an optional `yes`, nothing more: "forget the cache, where do we retry?" is a question.
    """
    words = line.strip().split(maxsplit=1)
    if not words:
        return Command(HELP)
    spec = BY_NAME.get(words[0].lower())
    argument = words[1].strip() if len(words) > 1 else ""
    if spec is None or (spec is FORGET and not _forget_shaped(argument)):
        return Command(ASK, line.strip())
    return Command(spec, argument)


def _forget_shaped(argument: str) -> bool:
    words = argument.split()
    return len(words) <= 1 or (len(words) == 2 and words[1].lower() == CONFIRM)


CONFIRM = "yes"  # `forget shop yes`: the word that confirms, typed or sent by a button


def forget_target(argument: str) -> tuple[str, bool]:
    """`shop` -> ("shop", False); `shop yes` -> ("shop", True): the repository and whether
    the line confirms. Anything else after the name is not a confirmation."""
    words = argument.split()
    confirmed = len(words) == 2 and words[1].lower() == CONFIRM
    return (words[0] if words else ""), confirmed


def confirm_line(repo: str) -> str:
    """The command line that confirms forgetting `repo` (what `forget_target` accepts)."""
    return f"{FORGET.name} {repo} {CONFIRM}"


@dataclass(frozen=True, slots=True)
class Syntax:
    """How one platform writes commands, supplied by its adapter.

    `template` places a command's usage ("map [repo]"): "/codecite {}" in Slack,
    "/{}" in Discord, "codecite {}" on the terminal. `ask` says how to ask a
    question; "{ask}" in it becomes the ask command in this syntax ("{ask_name}":
    without its argument).
    `threads`: follow-ups continue in the thread where the bot answered.
    `confirm` says how to confirm a command that asks first (`forget`): "{command}" is
    the confirming line in this syntax, "{line}" the bare line, "{repo}" its repository.
    """

    template: str
    ask: str
    threads: bool = True
    confirm: str = "`{command}`"

    def confirmation(self, repo: str) -> str:
        """How to confirm forgetting `repo` here, e.g. "`/codecite forget shop yes`"."""
        line = confirm_line(repo)
        return self.confirm.format(command=self.template.format(line), line=line, repo=repo)

    def command(self, spec: CommandSpec, *, with_args: bool = True) -> str:
        return self.template.format(spec.usage if with_args else spec.name)


PLAIN = Syntax("{}", "`{ask}`", threads=False)  # for callers that name no platform


def help_text(syntax: Syntax) -> str:
    """What codecite does and how to ask, in the syntax of the platform asking (markdown)."""
    lines = [
        "**codecite** answers questions about your code and cites the exact lines.",
        "• Ask: "
        + syntax.ask.format(ask=syntax.command(ASK), ask_name=syntax.command(ASK, with_args=False)),
    ]
    if syntax.threads:
        lines.append("• Follow-ups: keep talking in the thread where I answered; I read the thread")
    for spec in COMMANDS:
        if spec is ASK:
            continue  # the "Ask:" line above says it, with the other ways to ask
        note = ADMINS_ONLY if spec.admin_only else ""
        lines.append(f"• `{syntax.command(spec)}`: {spec.summary}{note}")
    lines.append(
        'Good questions name things: "where do we retry failed webhooks?", '
        '"what calls `charge_customer`?". "Where is `X` defined?", "who calls `X`?" and '
        '"how is this project organised?" are answered exactly from the symbol table.'
    )
    return "\n".join(lines)


def command_list(syntax: Syntax, names: tuple[str, ...] = ()) -> str:
    """`/map [repo], /status, ...`: the commands (all, or those named) in one line."""
    specs = [BY_NAME[n] for n in names] if names else [s for s in COMMANDS if s is not ASK]
    return ", ".join(syntax.command(spec) for spec in specs)


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command gave: text, an answer, or (reindex) text that follows when done.

    `confirm`: the command asks first (`forget`); this is the line that confirms it, for
    an adapter to put behind a button (the text already says how to type it).
    """

    text: str
    answer: Answer | None = None
    ephemeral: bool = False
    later: Future[str] | None = None  # reindex, forget: the report, once the line has run it
    confirm: str = ""

    def final_text(self, timeout: float | None = None) -> str:
        """The text, waiting for `later` when there is one (for callers that may block)."""
        return self.later.result(timeout) if self.later is not None else self.text
