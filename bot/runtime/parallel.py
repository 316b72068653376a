"""Spread CPU-bound ingest work over the machine's cores, results kept in input order.

    for result in ordered_map(work, items, weight=len):
        ...

`work` turns a batch (a list of items) into a list of as many results; it must
be a module-level function so a worker process can import it, and its items
and results must pickle. Items are cut into batches of about `batch_weight`.
Batches go to worker processes and, whenever the next result in order is not
ready yet, to the calling thread itself: the caller never idles while a worker
starts up, and N cores need only N - 1 workers.

Small inputs (under `parallel_above`, decided after reading at most that much
of `items`) run in the calling thread alone: starting a process costs more than
it saves there. So does everything on a machine with fewer than `MIN_CORES`
cores: there the one other core also serves the bot and the rest of the
machine, and a worker's memory (an interpreter with numpy and the grammars,
about 50 MB) would buy at most half of the work back.

Workers are started with `spawn`, which is safe in a process that runs other
threads (the bot's server), unlike `fork`; they live for one call, so an idle
bot holds no extra memory. Unlike a plain `spawn`, a worker does not run the
caller's main module (for `codecite` that is the whole command line, 65 MB of
imports in every worker): `work` must live in an importable module, and a worker
imports only that. At most `AHEAD` batches per worker are in flight or
waiting to be yielded, which bounds memory however long `items` is. Records
logged in a worker are handled by the caller's loggers. If a worker dies (the
pool breaks), its unfinished batches are redone in the calling thread, or with
`redo_broken=False` the map raises `WorkerDied` instead (for work that may itself
be what kills a process); an exception raised by `work` itself propagates as it
would serially.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import BrokenExecutor, CancelledError, Future
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

MIN_CORES = 3
MAX_WORKERS = 3  # each worker is another interpreter's worth of memory
AHEAD = 3  # batches per worker in flight or buffered
BATCH_WEIGHT = 1 << 20
PARALLEL_ABOVE = 4 << 20
STOP_SECONDS = 10.0  # for the log forwarding thread to drain after the workers exit
ORPHAN_CHECK_SECONDS = 0.5  # how often a worker looks whether the process it serves is gone
_STOP = None  # ends the log forwarding thread


class WorkerDied(RuntimeError):
    """A worker process died before finishing `batch` (see `redo_broken`)."""

    def __init__(self, batch: list[Any]) -> None:
        super().__init__(f"a worker process died with a batch of {len(batch)} items")
        self.batch = batch


def default_workers() -> int:
    """Worker processes beside the caller: one per further core this process may use."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return 0 if cores < MIN_CORES else min(cores - 1, MAX_WORKERS)


def ordered_map(
    work: Callable[[list[T]], list[R]],
    items: Iterable[T],
    *,
    weight: Callable[[T], int],
    batch_weight: int = BATCH_WEIGHT,
    parallel_above: int = PARALLEL_ABOVE,
    workers: int | None = None,
    redo_broken: bool = True,
) -> Generator[R, None, None]:
    """`work` over `items` in batches, one result per item, in order (see the module doc).

    Closing the generator early stops the workers (after their current batch).
    """
    batches = _batches(items, weight, batch_weight)
    count = default_workers() if workers is None else workers
    head: list[list[T]] = []
    seen = 0
    if count > 0:
        for batch, size in batches:
            head.append(batch)
            seen += size
            if seen >= parallel_above:
                break
    rest = chain(head, (batch for batch, _ in batches))
    if count <= 0 or not head or seen < parallel_above:
        for batch in rest:
            yield from _checked(work(batch), batch)
        return
    yield from _Pool(work, count, redo_broken).run(rest)


def _batches(
    items: Iterable[T], weight: Callable[[T], int], limit: int
) -> Iterator[tuple[list[T], int]]:
    batch: list[T] = []
    size = 0
    for item in items:
        batch.append(item)
        size += max(1, weight(item))
        if size >= limit:
            yield batch, size
            batch, size = [], 0
    if batch:
        yield batch, size


def _checked(results: list[R], batch: list[Any]) -> list[R]:
    if len(results) != len(batch):
        raise ValueError(f"a batch of {len(batch)} items gave {len(results)} results")
    return results


@dataclass(slots=True)
class _Slot(Generic[T, R]):
    """One batch in order: sent to a worker (`future`) or done by the caller (`results`)."""

    batch: list[T]
    future: Future[list[R]] | None = None
    results: list[R] | None = None


class _Pool(Generic[T, R]):
    def __init__(
        self, work: Callable[[list[T]], list[R]], workers: int, redo_broken: bool = True
    ) -> None:
        self._work = work
        self._workers = workers
        self._redo_broken = redo_broken
        self._executor: ProcessPoolExecutor | None = None
        self._logs: Any = None  # a multiprocessing queue of the workers' log records
        self._forwarder: threading.Thread | None = None

    def run(self, batches: Iterator[list[T]]) -> Iterator[R]:
        try:
            self._start()
        except (OSError, ValueError, ImportError) as exc:  # e.g. no /dev/shm, no semaphores
            log.warning("no worker processes (%s); working in one process", exc)
            for batch in batches:
                yield from _checked(self._work(batch), batch)
            return
        try:
            yield from self._ordered(batches)
        finally:
            self._stop()

    def _ordered(self, batches: Iterator[list[T]]) -> Iterator[R]:
        queue: deque[_Slot[T, R]] = deque()
        limit = AHEAD * self._workers + 1
        while True:
            self._fill(queue, batches, limit)
            if not queue:  # nothing left, or no pool any more: the caller works
                batch = next(batches, None)
                if batch is None:
                    return
                queue.append(_Slot(batch, results=self._work(batch)))
            slot = queue[0]
            if slot.future is not None and not slot.future.done() and len(queue) < limit:
                batch = next(batches, None)
                if batch is not None:  # the caller works instead of waiting
                    queue.append(_Slot(batch, results=self._work(batch)))
                    continue
            queue.popleft()
            yield from _checked(self._result(slot), slot.batch)

    def _fill(self, queue: deque[_Slot[T, R]], batches: Iterator[list[T]], limit: int) -> None:
        """Keep every worker busy: two batches each in flight, within the queue's limit."""
        sent = sum(slot.future is not None for slot in queue)
        while self._executor is not None and sent < 2 * self._workers and len(queue) < limit:
            batch = next(batches, None)
            if batch is None:
                return
            try:
                with main_left_out():  # a submit may start a worker process
                    future = self._executor.submit(self._work, batch)
                queue.append(_Slot(batch, future=future))
            except (BrokenExecutor, OSError):  # a worker died, or could not be started
                self._broken()
                queue.append(_Slot(batch, results=self._work(batch)))
            sent += 1

    def _result(self, slot: _Slot[T, R]) -> list[R]:
        if slot.results is not None:
            return slot.results
        assert slot.future is not None
        try:
            return slot.future.result()
        except (BrokenExecutor, CancelledError):  # cancelled: by _broken, for a dead pool
            self._broken()
            if not self._redo_broken:
                raise WorkerDied(slot.batch) from None
            return self._work(slot.batch)

    def _broken(self) -> None:
        if self._executor is not None:
            if self._redo_broken:
                log.warning("a worker process died; finishing its work in this process")
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def _start(self) -> None:
        # Imported here: a process that never starts workers does not load them.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")
        self._logs = context.Queue()
        level = logging.getLogger().getEffectiveLevel()
        self._executor = ProcessPoolExecutor(
            self._workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(self._logs, level, os.getpid()),
        )
        self._forwarder = threading.Thread(
            target=_forward_logs, args=(self._logs,), name="worker-logs", daemon=True
        )
        self._forwarder.start()

    def _stop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        if self._forwarder is not None:
            self._logs.put(_STOP)
            self._forwarder.join(timeout=STOP_SECONDS)
            if self._forwarder.is_alive():  # a worker killed mid-record can wedge the queue
                log.warning("worker log forwarding did not stop; leaving it behind")
            self._logs.close()
            self._logs.join_thread()


_MAIN_LOCK = threading.Lock()


@contextmanager
def main_left_out() -> Iterator[None]:
    """While the block runs, a process started with `spawn` skips the main module: it
    would re-run it by path (`__file__`) or by name (`__spec__`)."""
    with _MAIN_LOCK:
        main = sys.modules.get("__main__", ModuleType("__main__"))
        path, spec = getattr(main, "__file__", None), getattr(main, "__spec__", None)
        if path is not None:
            del main.__file__
        if spec is not None:
            main.__spec__ = None  # read without a default
        try:
            yield
        finally:
            if path is not None:
                main.__file__ = path
            if spec is not None:
                main.__spec__ = spec


def _init_worker(logs: Any, level: int, parent: int) -> None:
    """In a worker: send every log record to the caller, at the caller's level; end when
    the caller's process does."""
    import logging.handlers

    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(logs)]
    root.setLevel(level)
    threading.Thread(target=_end_with, args=(parent,), name="orphan-check", daemon=True).start()


def _end_with(parent: int) -> None:
    """Exit once `parent` is gone (the worker is handed to another parent then).

    A caller killed outright (SIGKILL, the OOM killer) never shuts its pool down, and a
    worker waits for its next batch for ever: with it multiprocessing's resource
    tracker, which ends only once every process holding its pipe has. The parent-death
    signal of Linux is not used: it fires when the *thread* that started the worker
    ends, which is not this pool's lifetime.
    """
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(1)


def _forward_logs(logs: Any) -> None:
    """In the caller: hand the workers' records to the loggers they were logged to."""
    while True:
        record = logs.get()
        if record is _STOP:
            return
        relay(record)


def relay(record: logging.LogRecord) -> None:
    """A record logged in another process, to the logger it was logged to here (which
    keeps it or not by its own level)."""
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(record.levelno):
        logger.handle(record)
