"""What each `codecite` command does, over a Core: one handler a command.

`HANDLERS` maps a command's name to its handler; `cmd_migrate` needs no Core (a release
step runs it before anything else exists).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from rich.console import Console

from adapters.cli.chat import run_chat
from adapters.cli.console import error_console
from adapters.cli.history import history_options, print_commit_hits, print_log
from adapters.cli.parser import EXIT_FAILURE
from adapters.cli.plain import say
from adapters.cli.render import print_answer, print_report, print_streamed
from adapters.cli.status import StatusLine
from adapters.sections import PLATFORM_SECTIONS
from bot.commands import CONFIRM, FORGET, Command, Syntax
from bot.config import Settings, load_file_config
from bot.core import CLI, Core
from bot.errors import BotError, ConfigError

Handler = Callable[[Core, argparse.Namespace, Console], int]

TERMINAL = Syntax(
    "codecite {}",
    '`codecite ask "<question>"`, or `codecite chat` for a conversation',
    False,
    confirm="answer below (or run `codecite forget {repo} --yes`)",
)


def _scope(args: argparse.Namespace) -> frozenset[str] | None:
    repos: list[str] | None = getattr(args, "repo", None)
    return frozenset(repos) if repos else None


def cmd_index(core: Core, args: argparse.Namespace, console: Console) -> int:
    # Only `index` draws bars; rich.progress brings tables, fractions and decimal along.
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
    )

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
            args.location,
            name=args.name,
            branch=args.branch,
            progress=progress,
            on_wait=on_wait,
            history=history_options(args),
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
    commits = core.search_commits(args.question, CLI, repos=_scope(args), top_k=args.top_k)
    print_commit_hits(console, commits, as_json=args.json)
    for hit in hits:
        c = hit.chunk
        if args.json:
            row = {
                "kind": c.kind,  # what the chunk is; commit hits say "commit", no chunk does
                "repo": c.repo,
                "path": c.path,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "symbol": c.symbol,
                "score": round(hit.score, 6),
                "relevance": round(hit.relevance or 0.0, 4),
            }
            sys.stdout.write(json.dumps(row) + "\n")
        else:
            what = f"  {c.symbol}" if c.symbol else ""
            say(console, f"{hit.score:7.4f}  {c.repo}: {c.label}{what}", hang=9)
    return 0


def cmd_log(core: Core, args: argparse.Namespace, console: Console) -> int:
    if args.limit < 1:
        raise BotError("--limit must be at least 1.")
    print_log(console, core.history_log(args.repo, args.target, CLI, limit=args.limit))
    return 0


def cmd_map(core: Core, args: argparse.Namespace, console: Console) -> int:
    answer = core.repo_map(args.repo, CLI)
    if args.diagram is None:
        print_answer(console, answer, details=False)
        return 0
    from adapters.cli.diagram import write_diagram

    write_diagram(answer, args.diagram)
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
    """Run the database's schema migrations; needs no Core (a release step runs it alone).

    codecite.toml is read first, as every process reads it: a release whose config is
    broken fails here, with its one line, before any process of it starts."""
    from bot.store import migrate_database

    load_file_config(settings.resolved_config_path(), PLATFORM_SECTIONS)
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
    "log": cmd_log,
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
