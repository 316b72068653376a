"""A chat model whose requests in flight can be given up at once (a process stopping).

    llm = InterruptibleChat(model, stopped)   # stopped: a threading.Event
    stopped.set()                             # every stream and completion waiting ends now

Closing an HTTP client does not wake a thread blocked reading a reply that has stalled
(a model that stopped sending: it would wait out the whole request timeout), so the
reply is read on a thread of its own and the caller waits for it, or for `stopped`,
whichever comes first; then ServiceError, as for a reply that broke. The reading thread
is left to end with its request, or with the process.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from bot.errors import ServiceError
from bot.llm.chat import LLM, Completion, Message

T = TypeVar("T")

LOOK_SECONDS = 0.1  # how often a waiting caller looks at `stopped`
_STOPPED = "stopped: the process is restarting"


class InterruptibleChat:
    def __init__(self, llm: LLM, stopped: threading.Event) -> None:
        self._llm = llm
        self._stopped = stopped
        self.model = llm.model

    def __repr__(self) -> str:
        return f"InterruptibleChat({self._llm!r})"

    def __getattr__(self, name: str) -> Any:  # ping, service, usage, close: the model's own
        return getattr(self._llm, name)

    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> Completion:
        return _waited(lambda: self._llm.complete(messages, max_tokens=max_tokens), self._stopped)

    def stream(self, messages: Sequence[Message], *, max_tokens: int) -> Iterator[str]:
        source = _waited(lambda: self._llm.stream(messages, max_tokens=max_tokens), self._stopped)
        return _Pumped(source, self._stopped)


def _waited(call: Callable[[], T], stopped: threading.Event) -> T:
    """`call()` on a thread of its own; ServiceError when `stopped` is set first."""
    done: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            done.put((True, call()))
        except BaseException as exc:  # noqa: BLE001 -- handed to the waiting caller
            done.put((False, exc))

    threading.Thread(target=run, name="model-request", daemon=True).start()
    ok, value = _get(done, stopped)
    if not ok:
        raise value
    result: T = value
    return result


def _get(box: queue.Queue[tuple[Any, Any]], stopped: threading.Event) -> tuple[Any, Any]:
    while True:
        try:
            return box.get(timeout=LOOK_SECONDS)
        except queue.Empty:
            if stopped.is_set():
                raise ServiceError(detail=_STOPPED) from None


class _Pumped:
    """The model's text pieces, read on a thread of their own; `completion` is the source's."""

    def __init__(self, source: Iterator[str], stopped: threading.Event) -> None:
        self._source = source
        self._stopped = stopped
        self._pieces: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._ended = False
        threading.Thread(target=self._pump, name="model-stream", daemon=True).start()

    @property
    def completion(self) -> Completion | None:
        found = getattr(self._source, "completion", None)
        return found if isinstance(found, Completion) else None

    def _pump(self) -> None:
        try:
            for piece in self._source:
                self._pieces.put(("piece", piece))
            self._pieces.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 -- raised in the reading caller
            self._pieces.put(("error", exc))

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        if self._ended:
            raise StopIteration
        if self._stopped.is_set():
            raise ServiceError(detail=_STOPPED)
        kind, value = _get(self._pieces, self._stopped)
        if kind == "piece":
            return str(value)
        self._ended = True
        if kind == "error":
            raise value
        raise StopIteration
