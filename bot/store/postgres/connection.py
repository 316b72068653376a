"""One PostgreSQL database behind a small connection pool, every call one transaction, every
driver error a StoreError, and the URL (a secret) never in a message.

psycopg is imported here, on first use of a database URL only: the embedded default
(`make demo`) never imports it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from bot.errors import DatabaseUnavailable, DiskFullError, StoreError
from bot.runtime import metrics

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

log = logging.getLogger(__name__)

T = TypeVar("T")

POOL_MIN, POOL_MAX = 1, 4
CONNECT_TIMEOUT = 10  # seconds to wait for a connection (the pool's, and a new one's)
QUICK_WAIT = 0.5  # seconds a call waits for a free pooled connection before asking the server
_UNREACHABLE = "The database could not be reached; check CODECITE_DATABASE_URL and the server."
_REFUSED = "The database refused codecite's credentials; check the user and password in the URL."
_FAILED = "The database could not be read or written."
_DISK_FULL = "The database server's disk is full; free some space and try again."


def redact(url: str) -> str:
    """`url` fit to show: no password, user or query (`postgresql://host:5432/db`)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable database URL)"
    if not parts.scheme:
        return "(a database connection string)"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def describe(url: str) -> str:
    """The host (and database) the URL names, for sentences to users."""
    return redact(url).split("://", 1)[-1] or "the local socket"


class Database:
    """`run(op)` runs `op(connection)` in one transaction on a pooled connection."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._secrets = url_secrets(url)
        self._pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"Database({redact(self._url)!r})"

    @property
    def where(self) -> str:
        return describe(self._url)

    def run(self, op: Callable[[psycopg.Connection[tuple[object, ...]]], T]) -> T:
        return self._call(op, transaction=True)

    def read(self, op: Callable[[psycopg.Connection[tuple[object, ...]]], T]) -> T:
        """`op(connection)` outside a transaction (autocommit): a read of one statement is
        one round trip, and sees one snapshot. `op` must not write (it may run twice)."""
        return self._call(op, transaction=False)

    def _call(
        self, op: Callable[[psycopg.Connection[tuple[object, ...]]], T], *, transaction: bool
    ) -> T:
        import psycopg

        with (
            self.translated(),
            metrics.timed_store("postgresql", "write" if transaction else "read"),
        ):
            for attempt in range(POOL_MAX + 1):
                with self._pooled() as conn:
                    begun = False
                    try:
                        if not transaction:
                            return op(conn)
                        with conn.transaction():
                            begun = True
                            return op(conn)
                    except psycopg.OperationalError:
                        # An idle connection the server dropped (a restart): the pool
                        # discards it; the call moves to the next one unless a write
                        # may have reached the server. No check per checkout (a round
                        # trip per call); every stale connection fails at once.
                        if begun or not conn.broken or attempt == POOL_MAX:
                            raise
        raise AssertionError("unreachable")

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
        """A pooled connection. None free at once means a busy pool or a server that is
        down; one direct connection tells which without waiting out the pool's timeout: a
        refused or unreachable server is reported now, with its reason, and a busy pool is
        waited for as long as usual."""
        from psycopg_pool import PoolTimeout

        pool = self._pool_now()
        try:
            conn = pool.getconn(timeout=QUICK_WAIT)
        except PoolTimeout:
            self.connect().close()  # StoreError naming the host when the server is down
            conn = pool.getconn()
        try:
            with conn:  # a pooled connection is given back, not closed
                yield conn
        finally:
            pool.putconn(conn)

    def connect(self) -> psycopg.Connection[tuple[object, ...]]:
        """A connection of its own (autocommit), outside the pool: for session state such as
        advisory locks, which must die with this connection."""
        import psycopg

        with self.translated():
            return psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Driver errors become StoreError (DiskFullError when the server's disk is full),
        with the URL's secrets removed from the detail."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except psycopg.errors.DiskFull as exc:
            raise DiskFullError(_DISK_FULL, detail=self._clean(exc)) from None
        except (psycopg.OperationalError, PoolTimeout) as exc:
            # A chat user reads a plain sentence; the operator's, naming the setting and the
            # host, is the terminal's line and leads the log's detail.
            refused = "authentication failed" in str(exc)
            operator = f"{_REFUSED if refused else _UNREACHABLE} ({self.where})"
            raise DatabaseUnavailable(operator, detail=self._clean(exc)) from None
        except psycopg.Error as exc:
            raise StoreError(_FAILED, detail=self._clean(exc)) from None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _pool_now(self) -> ConnectionPool[psycopg.Connection[tuple[object, ...]]]:
        with self._lock:
            if self._closed:
                raise StoreError("codecite's stores are closed.", detail=self.where)
            if self._pool is None:
                # One direct connection first: an unreachable host or a wrong password is
                # reported at once, with its reason, not after the pool's timeout.
                self.connect().close()
                self._pool = _open_pool(self._url)
            return self._pool

    def _clean(self, exc: BaseException) -> str:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


def _open_pool(url: str) -> ConnectionPool[psycopg.Connection[tuple[object, ...]]]:
    from psycopg_pool import ConnectionPool

    pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] = ConnectionPool(
        url,
        min_size=POOL_MIN,
        max_size=POOL_MAX,
        timeout=CONNECT_TIMEOUT,
        # autocommit: `Database.read` sends its statement alone; `run` sends BEGIN/COMMIT.
        kwargs={"connect_timeout": CONNECT_TIMEOUT, "autocommit": True},
        open=False,
        name="codecite",
    )
    pool.open(wait=False)
    return pool


def url_secrets(url: str) -> list[str]:
    """The parts of `url` that must never be shown or logged: the whole URL, its password
    and any `password=` in a key=value string (longest first)."""
    found = [url]
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        found.append(password)
    found += re.findall(r"password\s*=\s*'?([^\s']+)", url)
    return sorted({s for s in found if s}, key=len, reverse=True)
