"""A strict local Discord gateway (v10) for tests: an aiohttp websocket in the test's event loop.

Speaks what discord.py's `DiscordWebSocket` speaks: HELLO (op 10) on connect,
IDENTIFY (op 2) answered with READY and one GUILD_CREATE per seeded guild,
HEARTBEAT (op 1) acked with op 11, RESUME (op 6) answered by replaying the
events the session missed and then RESUMED. Frames are zlib-stream compressed
(one stream per connection, each message ending in a sync flush) when the
client asks for `compress=zlib-stream`, as discord.py does; plain JSON text
otherwise. READY's `resume_gateway_url` is this server under `/resume`, so a
test can tell a resume from a fresh connection.

Strict as Discord is: the query must carry `v=10&encoding=json`; anything but a
heartbeat before IDENTIFY/RESUME closes with 4003, a wrong token with 4004, a
second IDENTIFY with 4005, a RESUME past the session's sequence with 4007, an
unknown opcode with 4001, bad JSON with 4002, IDENTIFY without intents with
4013. A RESUME of an unknown or expired session gets INVALID_SESSION (op 9,
`d: false`). Events are sent only when the identified intents ask for them,
and a guild message's `content` is blanked without the Message Content intent
unless the bot is mentioned. Every close the fake makes for a violation is
recorded in `violations`, which a test should find empty.

Fault knobs act on the live connection: `drop()` aborts the TCP connection
without a close frame (the client sees 1006), `close_connection(code)` sends a close
frame, `request_reconnect()` sends op 7, `expire_sessions()` makes the next
RESUME fail. `dispatch(event, data)` numbers an event in the current session;
with no live connection it waits in the session's backlog for a RESUME.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.servers.discord_fake import APP_ID, BOT_ID, TOKEN
from tests.servers.discord_wire import user_payload

HEARTBEAT_MS = 500
RESUME_PATH = "/resume"
GUILDS = 1 << 0
GUILD_MESSAGES = 1 << 9
DIRECT_MESSAGES = 1 << 12
MESSAGE_CONTENT = 1 << 15


@dataclass(frozen=True)
class Received:
    """One payload a client sent, on the numbered connection."""

    connection: int
    op: int
    data: Any


@dataclass
class Session:
    id: str
    intents: int
    seq: int = 0
    backlog: list[dict[str, Any]] = field(default_factory=list)  # every numbered dispatch
    connection: Connection | None = None


@dataclass
class Connection:
    number: int
    path: str
    ws: web.WebSocketResponse
    transport: asyncio.Transport | None
    compressor: Any = None  # a zlib compress object for zlib-stream
    session: Session | None = None
    how: str = ""  # "identify" or "resume" once established
    closed: bool = False


class _Violation(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class GatewayFake:
    def __init__(
        self,
        *,
        token: str = TOKEN,
        guilds: list[dict[str, Any]] | None = None,
        heartbeat_ms: int = HEARTBEAT_MS,
    ) -> None:
        self.token = token
        self.guilds = guilds or []  # GUILD_CREATE payloads sent after every READY
        self.heartbeat_ms = heartbeat_ms
        self.bot_user = user_payload(BOT_ID, "codecite", bot=True)
        self.received: list[Received] = []
        self.connections: list[Connection] = []
        self.violations: list[str] = []
        self.sessions: dict[str, Session] = {}
        self.current: Session | None = None
        self._numbers = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.origin = ""

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._connect)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        port = self._runner.addresses[0][1]
        self.origin = f"ws://127.0.0.1:{port}"
        return self.url

    @property
    def url(self) -> str:
        return self.origin + "/"

    async def close(self) -> None:
        for conn in self.connections:
            if not conn.closed:
                await conn.ws.close(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()

    async def wait_for(self, probe: Callable[[], Any], timeout: float = 15.0) -> Any:
        """Wait until `probe()` is truthy (re-checked after every frame and connection change)."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(probe), timeout)
        return probe()

    # -- queries for assertions ---------------------------------------------------------------

    def payloads(self, op: int) -> list[Any]:
        return [r.data for r in self.received if r.op == op]

    @property
    def identifies(self) -> list[Any]:
        return self.payloads(2)

    @property
    def resumes(self) -> list[Any]:
        return self.payloads(6)

    def established(self) -> list[Connection]:
        """Connections that identified or resumed, in order."""
        return [c for c in self.connections if c.how]

    # -- events and fault knobs ---------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> int | None:
        """Number `event` in the current session and send it if the intents ask for it."""
        session = self._session()
        seen = _as_seen(event, data, session.intents)
        if seen is None:
            return None
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": seen}
        session.backlog.append(frame)
        conn = session.connection
        if conn is not None:
            try:
                await self._send(conn, frame)
            except ConnectionResetError:  # it went away unnoticed; the backlog keeps the event
                self._detach(conn)
        return session.seq

    async def drop(self) -> None:
        """Abort the live connection: no close frame, the client sees an abnormal closure."""
        conn = self._live()
        self._detach(conn)
        if conn.transport is not None:
            conn.transport.abort()
        await self._notify()

    async def close_connection(self, code: int = 4000) -> None:
        """Close the live connection with a close frame carrying `code`."""
        conn = self._live()
        self._detach(conn)
        await conn.ws.close(code=code)
        await self._notify()

    async def request_reconnect(self) -> None:
        """Op 7: Discord asks the client to reconnect and resume."""
        await self._send(self._live(), {"op": 7, "d": None})

    def expire_sessions(self) -> None:
        """Every session so far can no longer be resumed."""
        self.sessions.clear()

    def _session(self) -> Session:
        if self.current is None:
            raise RuntimeError("no client has identified yet")
        return self.current

    def _live(self) -> Connection:
        conn = self._session().connection
        if conn is None:
            raise RuntimeError("no live gateway connection")
        return conn

    def _detach(self, conn: Connection) -> None:
        conn.closed = True
        if conn.session is not None and conn.session.connection is conn:
            conn.session.connection = None

    # -- one connection -----------------------------------------------------------------------

    async def _connect(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        conn = Connection(next(self._numbers), request.path, ws, request.transport)
        self.connections.append(conn)
        try:
            _check_query(request.query)
            if request.query.get("compress") == "zlib-stream":
                conn.compressor = zlib.compressobj()
            await self._send(conn, {"op": 10, "d": {"heartbeat_interval": self.heartbeat_ms}})
            async for msg in ws:
                await self._receive(conn, msg)
        except _Violation as exc:
            self.violations.append(f"connection {conn.number}: {exc.code} {exc.reason}")
            await ws.close(code=exc.code, message=exc.reason.encode())
        except ConnectionResetError:
            pass  # the knob aborted it, or the client went away mid-send
        finally:
            ended_by_client = not conn.closed
            self._detach(conn)
            if ended_by_client and ws.close_code in (1000, 1001) and conn.session is not None:
                self.sessions.pop(conn.session.id, None)  # a clean close ends the session
            await self._notify()
        return ws

    async def _receive(self, conn: Connection, msg: Any) -> None:
        if msg.type is not WSMsgType.TEXT:
            if msg.type is WSMsgType.BINARY:
                raise _Violation(4002, "binary frames are not accepted")
            return
        try:
            payload = json.loads(msg.data)
            op, data = payload["op"], payload.get("d")
        except (ValueError, KeyError, TypeError):
            raise _Violation(4002, "decode error") from None
        self.received.append(Received(conn.number, op, data))
        await self._notify()
        await self._handle(conn, op, data)

    async def _handle(self, conn: Connection, op: int, data: Any) -> None:
        if op == 1:
            await self._send(conn, {"op": 11, "d": None})
        elif op == 2:
            await self._identify(conn, data)
        elif op == 6:
            await self._resume(conn, data)
        elif op not in (3, 4, 8):  # presence, voice state, request members: accepted, unused
            raise _Violation(4001, f"unknown opcode {op}")
        elif not conn.how:
            raise _Violation(4003, "not authenticated")

    async def _identify(self, conn: Connection, data: Any) -> None:
        if conn.how:
            raise _Violation(4005, "already authenticated")
        if data.get("token") != self.token:
            raise _Violation(4004, "authentication failed")
        if not isinstance(data.get("intents"), int):
            raise _Violation(4013, "invalid intents")
        session = Session(secrets.token_hex(16), data["intents"])
        self.sessions[session.id] = session
        self.current = session
        self._attach(conn, session, "identify")
        ready = {
            "v": 10,
            "user": self.bot_user,
            "guilds": [{"id": g["id"], "unavailable": True} for g in self.guilds],
            "session_id": session.id,
            "resume_gateway_url": self.origin + RESUME_PATH,
            "application": {"id": str(APP_ID), "flags": 0},
        }
        await self.dispatch("READY", ready)
        for guild in self.guilds:
            await self.dispatch("GUILD_CREATE", guild)

    async def _resume(self, conn: Connection, data: Any) -> None:
        if conn.how:
            raise _Violation(4005, "already authenticated")
        if data.get("token") != self.token:
            raise _Violation(4004, "authentication failed")
        session = self.sessions.get(data.get("session_id"))
        if session is None:
            await self._send(conn, {"op": 9, "d": False})  # the client must IDENTIFY afresh
            return
        seq = data.get("seq") or 0
        if seq > session.seq:
            raise _Violation(4007, "invalid seq")
        if session.connection is not None:  # a resume replaces the old connection
            old = session.connection
            self._detach(old)
            await old.ws.close(code=4000)
        self.current = session
        self._attach(conn, session, "resume")
        for frame in session.backlog:
            if frame["s"] > seq:
                await self._send(conn, frame)
        await self._send(conn, {"op": 0, "t": "RESUMED", "s": None, "d": {}})

    def _attach(self, conn: Connection, session: Session, how: str) -> None:
        conn.session, conn.how = session, how
        session.connection = conn

    async def _send(self, conn: Connection, frame: dict[str, Any]) -> None:
        text = json.dumps(frame, separators=(",", ":"))
        if conn.compressor is None:
            await conn.ws.send_str(text)
            return
        body = conn.compressor.compress(text.encode()) + conn.compressor.flush(zlib.Z_SYNC_FLUSH)
        await conn.ws.send_bytes(body)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()


def _check_query(query: Any) -> None:
    if query.get("v") != "10":
        raise _Violation(4012, "invalid API version")
    if query.get("encoding", "json") != "json":
        raise _Violation(4002, "only json encoding is served")
    if query.get("compress") not in (None, "zlib-stream"):
        raise _Violation(4000, f"unsupported compress {query.get('compress')}")


def _as_seen(event: str, data: dict[str, Any], intents: int) -> dict[str, Any] | None:
    """The event as a client with these intents receives it, or None if it is not sent."""
    if event == "GUILD_CREATE" and not intents & GUILDS:
        return None
    if event != "MESSAGE_CREATE":
        return data
    in_guild = "guild_id" in data
    if not intents & (GUILD_MESSAGES if in_guild else DIRECT_MESSAGES):
        return None
    mentioned = any(int(u["id"]) == BOT_ID for u in data.get("mentions", []))
    if in_guild and not intents & MESSAGE_CONTENT and not mentioned:
        return {**data, "content": "", "embeds": [], "attachments": [], "components": []}
    return data
