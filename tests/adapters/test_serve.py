"""`serve` as a process runs it: which port it binds in each mode, and what that port serves."""

from __future__ import annotations

import hashlib
import hmac
import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

import adapters.discord.serve as discord_serve
from adapters.serve import serve
from bot.config import FileConfig, RepoConfig, Settings
from bot.core import Core

SECRET = "hook-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""  # nothing listening


def _ping(port: int) -> int:
    digest = hmac.new(SECRET.encode(), b"{}", hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhooks/github",
        data=b"{}",
        method="POST",
        headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": f"sha256={digest}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _discord_probe(monkeypatch: pytest.MonkeyPatch, probe: Callable[[], None]) -> list[bool]:
    """Stand in for the Discord gateway client: probe the process's port while it 'runs'."""
    ran: list[bool] = []

    def serve_discord(core: Core, **kwargs: Any) -> None:
        probe()
        ran.append(True)

    monkeypatch.setattr(discord_serve, "serve_discord", serve_discord)
    monkeypatch.setenv("DISCORD_TOKEN", "discord-token")
    return ran


def test_discord_alone_binds_port_for_health_and_readiness(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv("PORT", str(port))
    monkeypatch.setenv("CODECITE_WEBHOOK_SECRET", SECRET)
    core = Core.from_settings(Settings(), FileConfig())
    seen: dict[str, Any] = {}

    def probe() -> None:
        seen["health"] = _get(port, "/healthz")
        seen["ready"] = _get(port, "/readyz")
        seen["ping"] = _ping(port)

    ran = _discord_probe(monkeypatch, probe)
    assert serve(core, discord=True, schedule=False) == 0
    assert ran == [True]
    assert seen == {"health": (200, b"ok"), "ready": (200, b"ready"), "ping": 200}
    assert _get(port, "/healthz") == (0, b"")  # stopped with the process's adapters


def test_without_port_discord_binds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    core = Core.from_settings(Settings(), FileConfig())
    listening: list[int] = []
    import adapters.serve as serve_module

    real = serve_module.start_routed

    def start_routed(*args: Any, **kwargs: Any) -> Any:
        listening.append(kwargs["port"])
        return real(*args, **kwargs)

    monkeypatch.setattr(serve_module, "start_routed", start_routed)
    _discord_probe(monkeypatch, lambda: None)
    assert serve(core, discord=True, schedule=False) == 0
    assert listening == []


def test_without_port_the_in_process_scheduler_takes_webhooks_on_the_webhook_port(
    monkeypatch: pytest.MonkeyPatch, make_repo
) -> None:
    from tests.support.shop import build_shop

    repo = make_repo("shop")
    build_shop(repo)
    webhook_port = free_port()
    monkeypatch.setenv("CODECITE_WEBHOOK_SECRET", SECRET)
    config = FileConfig(repos=(RepoConfig(name="shop", path=str(repo.path)),))
    core = Core.from_settings(Settings(), config)
    seen: dict[str, Any] = {}

    def probe() -> None:
        seen["ping"] = _ping(webhook_port)
        seen["ready"] = _get(webhook_port, "/readyz")[0]

    _discord_probe(monkeypatch, probe)
    assert serve(core, discord=True, webhook_port=webhook_port) == 0
    assert seen == {"ping": 200, "ready": 200}


def test_serve_runs_the_job_runner_with_the_scheduler_even_without_configured_repos(
    monkeypatch: pytest.MonkeyPatch, make_repo
) -> None:
    from concurrent.futures import TimeoutError as FutureTimeout

    from bot.context import Context
    from tests.support.shop import build_shop

    repo = make_repo("shop")
    build_shop(repo)
    core = Core.from_settings(Settings(), FileConfig())  # nothing configured: the local default
    core.index_repo(str(repo.path), name="shop")
    admin = Context("discord", "U1", "C1", is_admin=True)
    seen: dict[str, Any] = {}

    def with_scheduler() -> None:
        seen["report"] = core.reindex("shop", admin).result(timeout=60)

    _discord_probe(monkeypatch, with_scheduler)
    assert serve(core, discord=True) == 0
    assert seen["report"].startswith("• shop: up to date")

    def without_scheduler() -> None:
        try:
            seen["late"] = core.reindex("shop", admin).result(timeout=1.5)
        except FutureTimeout:
            seen["late"] = None  # recorded, and left for a scheduler: this process ingests nothing

    _discord_probe(monkeypatch, without_scheduler)
    assert serve(core, discord=True, schedule=False) == 0
    assert seen["late"] is None


def test_serve_ingests_in_a_child_process_and_answers_from_what_it_wrote(
    monkeypatch: pytest.MonkeyPatch, make_repo, caplog: pytest.LogCaptureFixture
) -> None:
    """The one-process default: the boot pass and a chat `reindex` ingest in child processes;
    this process answers from their index, and stopping leaves no child behind."""
    import logging
    import multiprocessing
    import os
    import time

    from bot.context import Context
    from tests.support.shop import build_shop

    repo = make_repo("shop")
    build_shop(repo)
    config = FileConfig(repos=(RepoConfig(name="shop", path=str(repo.path)),))
    core = Core.from_settings(Settings(), config)
    admin = Context("discord", "U1", "C1", is_admin=True)
    caplog.set_level(logging.INFO, logger="bot.ingest")
    seen: dict[str, Any] = {}

    def paths(text: str) -> list[str]:
        return [hit.chunk.path for hit in core.search(text, admin)]

    def chat() -> None:
        deadline = time.monotonic() + 60
        while core.never_indexed() and time.monotonic() < deadline:  # the boot pass
            time.sleep(0.05)
        seen["boot"] = paths("retry failed webhooks")
        repo.write("shop/refunds.py", "def refund_captured_invoice(invoice):\n    return 0\n")
        repo.commit("refunds")
        seen["report"] = core.reindex("shop", admin).result(timeout=60)
        seen["after"] = paths("refund captured invoice")

    _discord_probe(monkeypatch, chat)
    assert serve(core, discord=True) == 0
    assert "shop/webhooks.py" in seen["boot"]
    assert seen["report"].startswith("• shop: ") and "1 files updated" in seen["report"]
    assert seen["after"][0] == "shop/refunds.py"
    children = {r.process for r in caplog.records if r.name.startswith("bot.ingest")}
    assert children and os.getpid() not in children and len(children) >= 2  # boot, reindex
    assert multiprocessing.active_children() == []
    last = core.runs.last("shop")
    assert last is not None and last.ok and last.trigger == "discord command"
