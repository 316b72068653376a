"""Ctrl-C reaches the main thread, whichever thread the kernel hands it to.

The kernel delivers a process's SIGINT to any thread that does not block it. When it
lands on a thread of a library (numpy's BLAS starts some) while the main thread waits in
readline for a line, or on a lock, the wait never ends: Python only acts on a signal in
the main thread. So `codecite` blocks SIGINT in its main thread before any other thread
exists (every thread started later inherits that), and one small thread takes each
SIGINT with `sigwait` and sends the main thread a SIGUSR1 of its own, which raises
KeyboardInterrupt there, as a Ctrl-C would.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

FORWARDED = signal.SIGUSR1 if hasattr(signal, "SIGUSR1") else signal.SIGINT


def route_to_main_thread() -> None:
    """Call once, in the main thread, before any other thread starts (POSIX only)."""
    if not hasattr(signal, "pthread_sigmask") or not hasattr(signal, "sigwait"):
        return  # Windows: the console delivers Ctrl-C to the main thread already
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main
    signal.signal(FORWARDED, _interrupt)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def forward() -> None:
        while True:
            signal.sigwait({signal.SIGINT})
            signal.pthread_kill(main, FORWARDED)

    threading.Thread(target=forward, name="codecite-ctrl-c", daemon=True).start()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
