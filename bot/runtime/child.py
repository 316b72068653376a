"""Run one piece of work in a child process at lower CPU priority, and wait for it here.

    children = Children()
    result = children.run(work, args, on_report=print)   # work(report, *args) in a child
    children.cancel()                                      # shutdown: stop every child

Why: CPU-bound work (an ingest) in a thread of the answering process holds the GIL,
and answers wait for it. In a child it has its own interpreter, and `os.nice` lets
the scheduler give the parent's answers the core first.

How, and the rules it keeps:
- `spawn` (never `fork` of a threaded process); the child is not a daemon, so it may
  start worker processes of its own. `work` and its arguments must pickle (a
  module-level function), and its result too.
- The child leads its own process group: a Ctrl-C at the terminal reaches only the
  parent, which decides (`cancel`), and cancelling signals the whole group, so the
  child's own workers go with it. On Linux the child also gets SIGTERM if the parent
  dies without cancelling it (`PR_SET_PDEATHSIG`): no orphans.
- SIGTERM ends the child by raising `Cancelled` in it, so its transactions roll back
  as for any exception; a child that does not end within `grace` seconds is killed.
- `work(report, *args)`: `report(value)` sends a picklable value to `on_report`, which
  runs in the waiting thread of the parent. The child's log records are handled by
  the parent's loggers, with the child's pid in `record.process`.
- What the caller sees: the result; a `BotError` raised in the child as the same class
  with the same sentence; any other exception as `ChildFailed` (a bug: the child
  logged its traceback); a child that ended without an answer (killed, out of
  memory) as `ChildDied`; a cancelled one as `Cancelled`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, TypeVar

from bot.errors import BotError
from bot.runtime.parallel import main_left_out, relay

if TYPE_CHECKING:
    from multiprocessing.context import SpawnProcess

log = logging.getLogger(__name__)

R = TypeVar("R")
Report = Callable[[Any], None]

NICE = 10  # added to the child's niceness: answers first, ingest with what is left
GRACE = 10.0  # seconds a cancelled child has to roll back and exit before it is killed
EXIT_WAIT = 30.0  # seconds a child that answered has to exit (closing its stores)
_PR_SET_PDEATHSIG = 1


class Cancelled(BotError):
    user_message = (
        "The ingest was stopped because codecite is shutting down; the next run starts it again."
    )


class ChildDied(BotError):
    user_message = (
        "The ingest's process stopped before it finished; the index is as it was, "
        "and the next run tries again."
    )


class ChildFailed(RuntimeError):
    """An unexpected exception in the child (its traceback is in the log)."""


class Children:
    """The child processes of this process's runs; `cancel` stops them all."""

    def __init__(self, *, nice: int = NICE, grace: float = GRACE) -> None:
        self._nice = nice
        self._grace = grace
        self._live: dict[int, SpawnProcess] = {}
        self._lock = threading.Lock()
        self._cancelled = False

    def run(
        self,
        work: Callable[..., R],
        args: tuple[Any, ...],
        *,
        on_report: Report | None = None,
    ) -> R:
        """`work(report, *args)` in a new child process; its result (see the module doc)."""
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe(duplex=False)
        # INFO at least: the parent's loggers decide what they keep (`relay`)
        level = min(logging.getLogger().getEffectiveLevel(), logging.INFO)
        process = context.Process(
            target=_child_main,
            args=(theirs, work, args, self._nice, os.getpid(), level),
            name="codecite-ingest",
            daemon=False,  # it may start worker processes of its own
        )
        with self._lock:
            if self._cancelled:
                raise Cancelled()
            with main_left_out():  # the child need not re-run the CLI's imports
                process.start()
            self._live[process.pid or 0] = process
        theirs.close()  # the child's end: EOF here once the child is gone
        answered = False
        try:
            result: R = self._wait(process, ours, on_report)
            answered = True
            return result
        except (BotError, ChildFailed):
            answered = True  # the child answered with an error; it is exiting
            raise
        finally:
            ours.close()
            self._reap(process, stop=not answered)  # e.g. Ctrl-C in on_report: stop it
            with self._lock:
                self._live.pop(process.pid or 0, None)

    def pids(self) -> list[int]:
        """The children running now."""
        with self._lock:
            return [pid for pid, p in self._live.items() if p.is_alive()]

    def cancel(self) -> None:
        """Stop every child (SIGTERM, then SIGKILL after the grace period) and refuse new
        runs; each waiting `run` raises Cancelled."""
        with self._lock:
            self._cancelled = True
            live = list(self._live.values())
        for process in live:
            _signal_group(process, signal.SIGTERM)
        for process in live:
            process.join(self._grace)
            if process.is_alive():
                log.warning(
                    "ingest process %s did not stop in %.0f s; killing it", process.pid, self._grace
                )
            _signal_group(process, signal.SIGKILL)  # also any worker it left behind
            process.join()

    def _wait(self, process: SpawnProcess, conn: Connection, on_report: Report | None) -> Any:
        while True:
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):  # the child is gone without an answer
                process.join()
                if self._cancelled:
                    raise Cancelled() from None
                how = _how(process.exitcode)
                raise ChildDied(
                    f"The ingest's process stopped before it finished ({how}); the index is as "
                    "it was, and the next run tries again.",
                    detail=f"ingest process {process.pid}: {how}",
                ) from None
            if kind == "log":
                relay(payload)
            elif kind == "report":
                if on_report is not None:
                    on_report(payload)
            elif kind == "done":
                return payload
            elif kind == "error":
                raise _rebuilt(*payload)
            else:  # "bug"
                raise ChildFailed(payload)

    def _reap(self, process: SpawnProcess, *, stop: bool) -> None:
        """The child ends after answering; one that lingers (or that `stop` says is no
        longer waited for) is stopped, never left behind."""
        if not stop:
            process.join(EXIT_WAIT)
        if process.is_alive():
            log.warning("ingest process %s did not exit; stopping it", process.pid)
            _signal_group(process, signal.SIGTERM)
            process.join(self._grace)
        _signal_group(process, signal.SIGKILL)  # its workers, if any outlived it
        process.join()


def _signal_group(process: SpawnProcess, sig: int) -> None:
    pid = process.pid
    if pid is None:
        return
    try:
        os.killpg(pid, sig)  # the child leads its group (see _child_main)
    except ProcessLookupError:  # not (yet) a group: the child alone, if it still runs
        if process.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
    except PermissionError:  # the group's id was reused by someone else's group
        pass


def _how(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


def _rebuilt(module: str, name: str, user_message: str, detail: str) -> BotError:
    """The child's BotError as the same class, with the same sentence and detail."""
    cls: type[BotError] = BotError
    try:
        found = getattr(importlib.import_module(module), name)
        if isinstance(found, type) and issubclass(found, BotError):
            cls = found
    except (ImportError, AttributeError):
        pass
    error = cls.__new__(cls)
    BotError.__init__(error, user_message, detail=detail)
    return error


# -- in the child ------------------------------------------------------------------------------


class _Sender:
    """The child's end of the pipe, shared by its threads (a Connection is not thread-safe)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    def send(self, kind: str, payload: Any) -> None:
        with self._lock:
            self._conn.send((kind, payload))


class _PipeHandler(logging.Handler):
    def __init__(self, sender: _Sender) -> None:
        super().__init__()
        self._sender = sender

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.exc_info:  # tracebacks do not pickle: send their text
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.msg, record.args, record.exc_info = record.getMessage(), None, None
            self._sender.send("log", record)
        except Exception:  # noqa: BLE001 - a lost log line must not end the work
            self.handleError(record)


def _child_main(
    conn: Connection,
    work: Callable[..., Any],
    args: tuple[Any, ...],
    nice: int,
    parent: int,
    level: int,
) -> None:
    _detach(parent)
    with contextlib.suppress(OSError):
        os.nice(nice)
    sender = _Sender(conn)
    root = logging.getLogger()
    root.handlers[:] = [_PipeHandler(sender)]
    root.setLevel(level)
    answer: tuple[str, Any]
    try:
        answer = ("done", work(lambda value: sender.send("report", value), *args))
    except BotError as exc:
        error = (type(exc).__module__, type(exc).__qualname__, exc.user_message, exc.detail)
        answer = ("error", error)
    except Exception as exc:
        log.exception("the ingest process failed")
        answer = ("bug", f"{type(exc).__name__}: {exc}")
    sender.send(*answer)
    conn.close()


def _detach(parent: int) -> None:
    """Own process group; SIGTERM raises Cancelled; end with the parent (Linux)."""
    with contextlib.suppress(OSError):  # already a group or session leader
        os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _raise_cancelled)
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the line above
        raise SystemExit(1)


def _raise_cancelled(signum: int, frame: object) -> None:
    raise Cancelled()
