"""`codecite`: index repositories, ask and search them, chat, and run the bots.

Starting is cheap: this module loads argparse and the command line (`adapters.cli.parser`)
and nothing else of codecite, so `codecite --help`, `codecite <command> --help` and a
usage error answer at once. What a command needs (settings, the Core, the SDKs of its
index, model or chat platform) is imported once the command is known (`adapters.cli.run`),
and each SDK only where it is used.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapters.cli.interrupts import is_the_program, route_to_main_thread
from adapters.cli.parser import EXIT_FAILURE, EXIT_USER_ERROR, SERVERS, build_parser

__all__ = ["EXIT_FAILURE", "EXIT_USER_ERROR", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Servers stop on SIGINT/SIGTERM through handlers of their own; a test calling main()
    # in its own process keeps its signals. First: what run imports may start threads.
    if args.command not in SERVERS and is_the_program():
        route_to_main_thread()
    from adapters.cli.run import run  # the command is known: now load what it needs

    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
