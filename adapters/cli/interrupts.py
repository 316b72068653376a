"""Ctrl-C reaches the main thread, whichever thread the kernel hands it to.

The kernel delivers a process's SIGINT to any thread that does not block it. When it
lands on a thread of a library (numpy's BLAS starts some) while the main thread waits in
readline for a line, or on a lock, the wait never ends: Python only acts on a signal in
the main thread. So `codecite` blocks SIGINT in its main thread before any other thread
exists (every thread started later inherits that), and one small thread takes each
SIGINT with `sigwait` and sends the main thread a SIGUSR1 of its own, which raises
KeyboardInterrupt there, as a Ctrl-C would. A signal that arrives just before the main
thread starts waiting again (readline has just echoed a key) would not end that wait:
it is sent again until the main thread has acted on it.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType

FORWARDED = signal.SIGUSR1 if hasattr(signal, "SIGUSR1") else signal.SIGINT
RESEND_SECONDS = 0.2
_handled = threading.Event()  # the main thread raised KeyboardInterrupt for this Ctrl-C


def is_the_program() -> bool:
    """`codecite ...` or `python -m adapters.cli.main ...`, not a test calling `main`."""
    command = getattr(sys, "orig_argv", [])
    return Path(sys.argv[0]).name == "codecite" or "adapters.cli.main" in command[1:4]


def route_to_main_thread() -> None:
    """Call once, in the main thread, before any other thread starts (POSIX only)."""
    if not hasattr(signal, "pthread_sigmask") or not hasattr(signal, "sigwait"):
        return  # Windows: the console delivers Ctrl-C to the main thread already
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main
    signal.signal(FORWARDED, _interrupt)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def forward() -> None:
        try:
            while True:
                signal.sigwait({signal.SIGINT})
                _handled.clear()
                signal.pthread_kill(main, FORWARDED)
                while not _handled.wait(RESEND_SECONDS):
                    signal.pthread_kill(main, FORWARDED)
        except OSError:  # the main thread has ended: the process is exiting
            return

    threading.Thread(target=forward, name="codecite-ctrl-c", daemon=True).start()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    if _handled.is_set():
        return  # a resend of a Ctrl-C already acted on
    _handled.set()
    raise KeyboardInterrupt
