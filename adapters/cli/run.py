"""Run one parsed `codecite` command: settings, logging, the Core, and one line per error.

Bad input gets one line on stderr and a non-zero exit; details go to the log
file in the data directory. Users never see a traceback.
"""

from __future__ import annotations

import argparse
import logging

from adapters.cli.console import error_console, silence_stdout, stdout_console
from adapters.cli.handlers import HANDLERS, cmd_migrate
from adapters.cli.logs import PRINTED, setup_logging
from adapters.cli.parser import EXIT_FAILURE, EXIT_USER_ERROR, SERVERS
from adapters.cli.plain import say
from adapters.common.errors import user_facing
from adapters.sections import PLATFORM_SECTIONS
from bot.config import load_settings
from bot.core import Core
from bot.errors import BotError, ConfigError

log = logging.getLogger(__name__)

ANSWERING = ("ask", "search", "chat", "map")  # they need the index whole
REBUILDING_FIRST = "the search index was damaged; rebuilding it from the repositories first"


def run(args: argparse.Namespace) -> int:
    """The exit status of `args.command`."""
    console, err = stdout_console(), error_console()
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
        if args.command in ANSWERING and core.awaits_rebuild():
            say(err, f"warning: {REBUILDING_FIRST}", wrap=False)
            core.rebuild_index(inline=True)
        return HANDLERS[args.command](core, args, console)
    except BotError as exc:
        # For the log file; the terminal (or a server's stderr) gets the one line below.
        log.info("%s: %s", type(exc).__name__, exc.detail or exc.user_message, extra=PRINTED)
        say(err, f"error: {exc.operator_message}", wrap=False)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        say(err, "interrupted", wrap=False)
        return 130
    except BrokenPipeError:
        # The reader went away (`codecite search x --json | head -1`): what it wanted was
        # written. Point stdout at /dev/null so the interpreter's last flush is quiet too.
        silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - the boundary: one line, never a traceback
        say(err, f"error: {user_facing(exc, extra=PRINTED)}", wrap=False)
        return EXIT_FAILURE
    finally:
        if core is not None:
            core.close()
