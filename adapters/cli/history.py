"""The terminal's side of history: `index --history-*` options, commit hits of `search`,
and `codecite log`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from adapters.cli.plain import say
from bot.errors import BotError

if TYPE_CHECKING:
    from bot.answer.history_log import LogResult
    from bot.ingest.history import HistoryOptions
    from bot.retrieval.history_search import CommitHit


def history_options(args: argparse.Namespace) -> HistoryOptions | None:
    """The horizon `codecite index` was given; None: the repository's configured one."""
    from bot.ingest.history import HistoryOptions

    commits, days = args.history_commits, args.history_days
    if (commits is not None and commits < 0) or (days is not None and days < 0):
        raise BotError("--history-commits and --history-days must not be negative.")
    if args.no_history:
        return HistoryOptions(enabled=False)
    if commits is None and days is None:
        return None
    return HistoryOptions(commits=commits, days=days)


def commit_row(hit: CommitHit) -> dict[str, object]:
    """A commit hit as `search --json` prints it."""
    from bot.answer.history_refs import date_of

    c = hit.commit
    return {
        "kind": "commit",
        "repo": hit.repo,
        "sha": c.sha,
        "date": date_of(c.authored),
        "author": c.author,
        "subject": c.subject,
        "pr": c.pr,
        "paths": list(c.paths[:50]),
        "score": round(hit.score, 6),
    }


def print_commit_hits(console: Console, hits: Sequence[CommitHit], *, as_json: bool) -> None:
    for hit in hits:
        row = commit_row(hit)
        if as_json:
            sys.stdout.write(json.dumps(row) + "\n")
        else:
            pr = f" (#{row['pr']})" if row["pr"] else ""
            head = f"{hit.score:7.4f}  {hit.repo}: {hit.commit.sha[:8]} {row['date']}"
            line = f"{head} {row['subject']}{pr}"
            say(console, line, hang=9)


def print_log(console: Console, result: LogResult) -> None:
    what = f" touching {result.target}" if result.target else ""
    say(console, f"Recorded commits of {result.repo}{what}, newest first:", style="bold")
    for c in result.commits:
        pr = f" (#{c.pr})" if c.pr and f"#{c.pr}" not in c.subject else ""
        say(console, f"  {c.sha[:8]}  {c.date}  {c.author}  {c.subject}{pr}", hang=12)
        for url in (c.url, c.pr_url):  # the commit's page, then its pull request's
            if url:
                say(console, f"            {url}", style="dim")
