"""Every code path of codecite that loads a library, run once in the image (python3 only).

The Dockerfile runs it at build time, with bytecode writing on, so that the image keeps a
.pyc for exactly the modules codecite's processes import (and no other); tests/container runs
it in the built image, so that a cut that removes a file one of these paths needs fails CI:

- every module of `bot` and `adapters` imports (pkgutil.walk_packages);
- a diagram is drawn (Pillow, its PNG encoder and fonts);
- Kingfisher scans a text and finds the secrets in it (its native library);
- psycopg's binary libpq loads and a connection attempt fails as it should (no server);
- the Prometheus exposition, and the OpenAI client's request path up to the socket;
- the CLI indexes a git repository, answers from it, searches it and reports its status, and
  `serve` answers /healthz, /readyz and /metrics (the processes of the Procfile).

Prints one line per path and exits non-zero on the first that fails.
"""

from __future__ import annotations

import http.server
import importlib
import json
import os
import pkgutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import adapters
import bot


def imports() -> str:
    names = []
    for package in (bot, adapters):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
            names.append(info.name)
    return f"{len(names)} modules of bot and adapters import"


def diagram() -> str:
    from bot.answer.diagram import Diagram, Node, png

    nodes = (Node("web/", "serves requests", True), Node("store/", "keeps state", False))
    drawn = png(Diagram("layers", nodes, ((0, 1),)))
    assert drawn.startswith(b"\x89PNG\r\n\x1a\n"), drawn[:8]
    return f"a diagram drawn ({len(drawn)} bytes of PNG)"


def kingfisher() -> str:
    from bot.ingest.secrets.ruleset import ruleset_hits

    # Shapes from the providers' documented formats, made up here: no real credential.
    text = (
        'token = "xoxb-2401234567890-2412345678901-AbCdEfGhIjKlMnOpQrStUvWx"\n'
        'stripe = "sk_live_51HfQ2kLm9Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf"\n'
    )
    kinds = sorted(hit.kind for hit in ruleset_hits(text))
    assert kinds == ["slack-bot-token", "stripe-access-token"], kinds
    return f"Kingfisher found {', '.join(kinds)}"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def postgres() -> str:
    import psycopg
    import psycopg_pool  # noqa: F401  (the pool the PostgreSQL stores open)

    assert psycopg.pq.__impl__ == "binary", psycopg.pq.__impl__
    try:
        psycopg.connect(f"postgresql://u@127.0.0.1:{closed_port()}/d", connect_timeout=2)
    except psycopg.OperationalError:
        return f"psycopg {psycopg.pq.__impl__} libpq {psycopg.pq.version()} connects (refused)"
    raise AssertionError("a connection to a closed port succeeded")


def metrics() -> str:
    from prometheus_client import CollectorRegistry, Counter, generate_latest

    registry = CollectorRegistry()
    Counter("paths_total", "paths run", registry=registry).inc()
    assert b"paths_total 1.0" in generate_latest(registry)
    return "Prometheus exposition written"


def model_client() -> str:
    import openai

    client = openai.OpenAI(
        api_key="unused", base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=0
    )
    for call in (
        lambda: client.embeddings.create(model="m", input=["x"]),
        lambda: client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        ),
    ):
        try:
            call()
        except openai.APIConnectionError:
            continue
        raise AssertionError("a request to a closed port succeeded")
    return "the OpenAI client's requests reach the socket (refused)"


CART_PY = 'def cart_total(prices):\n    """The sum of the prices."""\n    return sum(prices)\n'


def codecite(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(["codecite", *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def processes() -> str:
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "CODECITE_HOME": f"{work}/data", "HOME": work}
        repo = Path(work, "repo")
        git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@localhost"]
        subprocess.run(["git", "init", "--quiet", "--initial-branch=main", str(repo)], check=True)
        (repo / "cart.py").write_text(CART_PY)
        subprocess.run([*git, "add", "cart.py"], check=True)
        subprocess.run([*git, "commit", "--quiet", "-m", "cart"], check=True)
        codecite("index", str(repo), "--name", "warm", env=env)
        assert "cart.py:L1-L3" in codecite("ask", "where is cart_total defined?", env=env)
        assert "cart.py" in codecite("search", "cart_total", env=env)
        codecite("status", env=env)
        serve(env)
    return "the CLI indexes, answers, searches; serve answers /healthz, /readyz, /metrics"


class SlackIdentity(http.server.BaseHTTPRequestHandler):
    """The one Web API call `serve --slack` makes at start (auth.test), answered locally."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        identity = {"ok": True, "team_id": "T1", "user_id": "U1", "bot_id": "B1", "user": "cc"}
        body = json.dumps(identity).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def slack_identity() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlackIdentity)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/"
    finally:
        server.shutdown()
        server.server_close()


def serve(env: dict[str, str]) -> None:
    with slack_identity() as api:
        slack = {
            "SLACK_BOT_TOKEN": "xoxb-image-paths",
            "SLACK_SIGNING_SECRET": "image-paths",
            "CODECITE_SLACK_API_URL": api,
        }
        serve_with({**env, **slack})


def serve_with(env: dict[str, str]) -> None:
    port = closed_port()
    server = subprocess.Popen(
        ["codecite", "serve", "--slack", "--no-schedule"],
        env={**env, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        for route in ("/healthz", "/readyz", "/metrics"):
            got = poll(f"http://127.0.0.1:{port}{route}", server)
            assert got, (route, server.stdout.read() if server.stdout else b"")
    finally:
        server.terminate()
        server.wait(60)


def poll(url: str, server: subprocess.Popen[bytes], timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 (http://127.0.0.1)
                return int(resp.status) == 200
        except OSError:
            time.sleep(0.2)
    return False


def main() -> None:
    paths = (imports, diagram, kingfisher, postgres, metrics, model_client, processes)
    for path in paths:
        print(f"image path: {path()}", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
