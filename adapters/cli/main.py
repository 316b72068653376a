"""`codecite`: index repositories, ask and search them, chat, and run the bots.

Bad input gets one line on stderr and a non-zero exit; details go to the log
file in the data directory. Users never see a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from adapters.cli.chat import run_chat
from adapters.cli.interrupts import is_the_program, route_to_main_thread
from adapters.cli.logs import PRINTED, setup_logging
from adapters.cli.plain import say
from adapters.cli.render import print_answer, print_report, print_streamed
from adapters.cli.status import StatusLine
from adapters.common.errors import user_facing
from adapters.sections import PLATFORM_SECTIONS
from bot.commands import CONFIRM, FORGET, Command, Syntax
from bot.config import Settings, load_settings
from bot.core import CLI, Core
from bot.errors import BotError, ConfigError

log = logging.getLogger(__name__)

SERVERS = ("serve", "schedule")
EXIT_USER_ERROR = 2
EXIT_FAILURE = 1

Handler = Callable[[Core, argparse.Namespace, Console], int]

TERMINAL = Syntax(
    "codecite {}",
    '`codecite ask "<question>"`, or `codecite chat` for a conversation',
    False,
    confirm="answer below (or run `codecite forget {repo} --yes`)",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codecite", description="Ask questions about your code; get answers with cited lines."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("index", help="index a git URL, a git repository or a directory")
    p.add_argument("location", metavar="PATH_OR_URL")
    p.add_argument("--name", help="name for the repository (default: from the path or URL)")
    p.add_argument("--branch", help="branch to index (default: the remote's default / HEAD)")

    p = sub.add_parser("ask", help="ask one question and print the answer")
    p.add_argument("question")
    p.add_argument("--repo", action="append", help="limit to this repository (repeatable)")

    p = sub.add_parser("chat", help="a terminal chat; reads questions from stdin")
    p.add_argument("--repo", action="append", help="limit to this repository (repeatable)")

    p = sub.add_parser("search", help="ranked code locations for a question")
    p.add_argument("question")
    p.add_argument("--repo", action="append", help="limit to this repository (repeatable)")
    p.add_argument("--top-k", type=int, default=10, help="how many hits (default 10)")
    p.add_argument("--json", action="store_true", help="one JSON object per hit, best first")

    p = sub.add_parser("map", help="the directory tree and most referenced symbols of the code")
    p.add_argument("repo", nargs="?", help="one repository (default: every indexed one)")

    sub.add_parser("status", help="what is indexed, at which commit, how fresh")
    sub.add_parser("repos", help="list the indexed repositories")

    p = sub.add_parser("reindex", help="re-ingest one or all repositories now")
    p.add_argument("repo", nargs="?")

    p = sub.add_parser(
        "forget", help="remove a repository: index, symbols, run log, queued jobs, clone"
    )
    p.add_argument("repo")
    p.add_argument("--yes", action="store_true", help="do not ask first (needed without a TTY)")

    p = sub.add_parser("feedback", help="list the 👍/👎 votes people gave answers")
    p.add_argument("--limit", type=int, default=50)

    p = sub.add_parser("init-index", help="create (or check) the Pinecone index; rebuild state")
    p.add_argument(
        "--rebuild-state",
        action="store_true",
        help="recreate the local state file from what the Pinecone index holds",
    )

    p = sub.add_parser("discord-invite", help="print the URL that adds the bot to a server")
    p.add_argument("application_id", nargs="?", help="default: looked up with DISCORD_TOKEN")

    p = sub.add_parser("serve", help="run the chat bots (Slack and/or Discord) and the scheduler")
    p.add_argument("--slack", action="store_true")
    p.add_argument("--discord", action="store_true")
    p.add_argument("--port", type=int, help="HTTP port for Slack (default $PORT, else 3000)")
    p.add_argument("--no-schedule", action="store_true", help="don't re-ingest on a schedule")
    p.add_argument("--webhook-port", type=int, help="port for push webhooks (needs the secret)")

    p = sub.add_parser("schedule", help="re-ingest configured repositories on their schedules")
    p.add_argument("--webhook-port", type=int, help="port for push webhooks (needs the secret)")
    sub.add_parser("migrate", help="bring the database's schema up to date (CODECITE_DATABASE_URL)")
    return parser


def _scope(args: argparse.Namespace) -> frozenset[str] | None:
    repos: list[str] | None = getattr(args, "repo", None)
    return frozenset(repos) if repos else None


def cmd_index(core: Core, args: argparse.Namespace, console: Console) -> int:
    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        tasks: dict[str, TaskID] = {}
        waiting: list[TaskID] = []

        def on_wait(notice: str) -> None:  # another ingest of the repository holds its lock
            if bar.disable:
                say(error_console(), notice, wrap=False)
            else:
                waiting.append(bar.add_task(notice, total=None))

        def progress(stage: str, done: int, total: int) -> None:
            while waiting:  # the lock is ours: the ingest has begun
                bar.remove_task(waiting.pop())
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        report = core.index_repo(
            args.location, name=args.name, branch=args.branch, progress=progress, on_wait=on_wait
        )
    print_report(console, report, core.embed_model)
    return 0


def cmd_ask(core: Core, args: argparse.Namespace, console: Console) -> int:
    with StatusLine(console) as status:
        stream = core.ask_stream(args.question, CLI, repos=_scope(args), progress=status)
        print_streamed(console, stream, status, live=core.settings.stream_answers)
    return 0


def cmd_chat(core: Core, args: argparse.Namespace, console: Console) -> int:
    return run_chat(core, console, scope=_scope(args))


def cmd_search(core: Core, args: argparse.Namespace, console: Console) -> int:
    if args.top_k < 1:
        raise BotError("--top-k must be at least 1.")
    hits = core.search(args.question, CLI, repos=_scope(args), top_k=args.top_k)
    for hit in hits:
        c = hit.chunk
        if args.json:
            row = {
                "repo": c.repo,
                "path": c.path,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "symbol": c.symbol,
                "kind": c.kind,
                "score": round(hit.score, 6),
                "relevance": round(hit.relevance or 0.0, 4),
            }
            sys.stdout.write(json.dumps(row) + "\n")
        else:
            what = f"  {c.symbol}" if c.symbol else ""
            say(console, f"{hit.score:7.4f}  {c.repo}: {c.label}{what}", hang=9)
    return 0


def cmd_map(core: Core, args: argparse.Namespace, console: Console) -> int:
    print_answer(console, core.repo_map(args.repo, CLI), details=False)
    return 0


def cmd_status(core: Core, args: argparse.Namespace, console: Console) -> int:
    say(console, core.run_command("status", CLI, TERMINAL).text)
    return 0


def cmd_repos(core: Core, args: argparse.Namespace, console: Console) -> int:
    say(console, core.run_command("repos", CLI, TERMINAL).text)
    return 0


def cmd_reindex(core: Core, args: argparse.Namespace, console: Console) -> int:
    def on_wait(notice: str) -> None:
        say(error_console(), notice, wrap=False)

    say(console, core.reindex(args.repo, CLI, inline=True, on_wait=on_wait).result())
    return 0


def cmd_forget(core: Core, args: argparse.Namespace, console: Console) -> int:
    """Asks on a terminal; elsewhere only `--yes` forgets (a script cannot be asked)."""
    if not args.yes:
        preview = core.run_command(Command(FORGET, args.repo), CLI, TERMINAL)  # refusals raise
        if not sys.stdin.isatty():
            raise BotError(
                f"Not forgetting {args.repo}: stdin is not a terminal to ask on; "
                "add --yes to confirm."
            )
        console.print(preview.text, highlight=False, markup=False)
        if not _agreed(console, f"Forget {args.repo} now? [y/N] "):
            console.print("Nothing was forgotten.")
            return EXIT_FAILURE
    result = core.run_command(Command(FORGET, f"{args.repo} {CONFIRM}"), CLI, TERMINAL)
    console.print(result.final_text(), highlight=False, markup=False)
    return 0


def _agreed(console: Console, prompt: str) -> bool:
    try:
        answer = console.input(prompt, markup=False)
    except EOFError:  # Ctrl-D: no
        console.print()
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_feedback(core: Core, args: argparse.Namespace, console: Console) -> int:
    rows = core.votes(limit=args.limit)
    if not rows:
        say(console, "No feedback yet.")
    for r in rows:
        vote = "👍" if r.vote > 0 else "👎"
        cites = ", ".join(r.citations) or "no citations"
        line = f"{r.at:%Y-%m-%d %H:%M} {vote} {r.platform}/{r.channel} {r.voter}: {r.question!r}"
        say(console, f"{line} ({cites})", hang=2)
    return 0


def cmd_init_index(core: Core, args: argparse.Namespace, console: Console) -> int:
    text = core.prepare_index(rebuild_state=args.rebuild_state)
    say(console, text or "The local index needs no set-up (CODECITE_INDEX=local).")
    return 0


def cmd_discord_invite(core: Core, args: argparse.Namespace, console: Console) -> int:
    from adapters.discord.invite import application_id_from_token, invite_url
    from adapters.discord.settings import DiscordSettings

    app_id = args.application_id
    if not app_id:
        settings = DiscordSettings.load()
        if settings.token is None:
            raise ConfigError("Give the application id, or set DISCORD_TOKEN to look it up.")
        app_id = application_id_from_token(settings.token.get_secret_value(), settings.api_url)
    say(console, invite_url(app_id), wrap=False)
    return 0


def cmd_serve(core: Core, args: argparse.Namespace, console: Console) -> int:
    from adapters.serve import serve

    return serve(
        core,
        slack=args.slack,
        discord=args.discord,
        port=args.port,
        schedule=not args.no_schedule,
        webhook_port=args.webhook_port,
    )


def cmd_schedule(core: Core, args: argparse.Namespace, console: Console) -> int:
    from adapters.serve import run_scheduler

    return run_scheduler(core, webhook_port=args.webhook_port)


def cmd_migrate(settings: Settings, console: Console) -> int:
    """Run the database's schema migrations; needs no Core (a release step runs it alone)."""
    from bot.store import migrate_database

    url = settings.database
    if url is None:
        raise ConfigError(
            "Set CODECITE_DATABASE_URL (or DATABASE_URL) to migrate a database; "
            "the data directory's SQLite files need no migration."
        )
    applied, version = migrate_database(url)
    if applied:
        say(console, f"Database schema migrated to version {version} (applied {len(applied)}).")
    else:
        say(console, f"Database schema already at version {version}; nothing to do.")
    return 0


HANDLERS: dict[str, Handler] = {
    "index": cmd_index,
    "ask": cmd_ask,
    "chat": cmd_chat,
    "search": cmd_search,
    "map": cmd_map,
    "status": cmd_status,
    "repos": cmd_repos,
    "reindex": cmd_reindex,
    "forget": cmd_forget,
    "feedback": cmd_feedback,
    "serve": cmd_serve,
    "schedule": cmd_schedule,
    "init-index": cmd_init_index,
    "discord-invite": cmd_discord_invite,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Servers stop on SIGINT/SIGTERM through handlers of their own; a test calling main()
    # in its own process keeps its signals.
    if args.command not in SERVERS and is_the_program():
        route_to_main_thread()
    # Nothing printed is read as markup; `say` wraps on a terminal, never in a pipe.
    console = _StdoutConsole(highlight=False, markup=False, emoji=False, soft_wrap=True)
    err = error_console()
    try:
        settings = load_settings()
    except ConfigError as exc:
        say(err, f"error: {exc.user_message}", wrap=False)
        return EXIT_USER_ERROR
    setup_logging(settings, verbose=args.verbose, server=args.command in SERVERS)
    core: Core | None = None
    try:
        if args.command == "migrate":
            return cmd_migrate(settings, console)
        core = Core.from_settings(settings, platform_sections=PLATFORM_SECTIONS)
        return HANDLERS[args.command](core, args, console)
    except BotError as exc:
        # For the log file; the terminal (or a server's stderr) gets the one line below.
        log.info("%s: %s", type(exc).__name__, exc.detail or exc.user_message, extra=PRINTED)
        say(err, f"error: {exc.user_message}", wrap=False)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        say(err, "interrupted", wrap=False)
        return 130
    except BrokenPipeError:
        # The reader went away (`codecite search x --json | head -1`): what it wanted was
        # written. Point stdout at /dev/null so the interpreter's last flush is quiet too.
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - the boundary: one line, never a traceback
        say(err, f"error: {user_facing(exc, extra=PRINTED)}", wrap=False)
        return EXIT_FAILURE
    finally:
        if core is not None:
            core.close()


def error_console() -> Console:
    """stderr, for errors and notices: one line each, never wrapped, never markup."""
    return Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        # Rich exits with status 1 here; a reader that left is no failure (see `main`).
        self.quiet = True
        raise BrokenPipeError


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is no real file (a test's capture): nothing will flush to the pipe
    finally:
        os.close(devnull)


if __name__ == "__main__":
    raise SystemExit(main())
