"""The command line of `codecite`: its commands, options and exit statuses.

Only argparse is imported here: `codecite --help`, `codecite <command> --help` and a
usage error are answered before anything else of codecite (or any SDK) is loaded.
"""

from __future__ import annotations

import argparse

SERVERS = ("serve", "schedule")  # long-running: their own signal handlers and logging
EXIT_USER_ERROR = 2  # bad input or configuration (argparse's usage errors exit 2 too)
EXIT_FAILURE = 1


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
    p.add_argument("--history-commits", type=int, metavar="N", help="record the newest N commits")
    p.add_argument("--history-days", type=int, metavar="N", help="record N days of commits")
    p.add_argument("--no-history", action="store_true", help="record no commits")

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

    p = sub.add_parser("log", help="the recorded commits that touched a path or symbol")
    p.add_argument("repo")
    p.add_argument("target", nargs="?", default="", metavar="PATH_OR_SYMBOL")
    p.add_argument("--limit", type=int, default=30, help="how many commits (default 30)")

    p = sub.add_parser("map", help="the directory tree and most referenced symbols of the code")
    p.add_argument("repo", nargs="?", help="one repository (default: every indexed one)")
    p.add_argument(
        "--diagram",
        nargs="?",
        const="-",
        metavar="FILE",
        help="the architecture diagram: a .png picture, or Mermaid text (.mmd, or stdout)",
    )

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
