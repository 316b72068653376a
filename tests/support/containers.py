"""The built image and the compose stack, driven as an operator drives them (tests/container/).

They run where a container daemon runs and the image was built: `.ci/run` builds it from a
local base (scripts/docker-base.sh), starts its own dockerd and sets CODECITE_TEST_IMAGE
(the image's tag), CODECITE_TEST_POSTGRES_IMAGE (PostgreSQL built on the same base) and
DOCKER_HOST. Elsewhere these tests are skipped, with that reason. Every container uses the
host's network, so the fakes of tests/servers/, started here on 127.0.0.1, are reached as
they are by the other tests.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.paths import ROOT

IMAGE_VARIABLE = "CODECITE_TEST_IMAGE"
POSTGRES_VARIABLE = "CODECITE_TEST_POSTGRES_IMAGE"
COMPOSE_FILE = ROOT / "docker-compose.yml"


def image_under_test() -> str:
    image = os.environ.get(IMAGE_VARIABLE, "")
    if not image:
        pytest.skip(f"{IMAGE_VARIABLE} is not set: .ci/run builds the image and runs these")
    return image


def docker(
    *args: str, timeout: float = 300, check: bool = True, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["docker", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args[:3])} failed: {done.stderr.strip()}")
    return done


def run(image: str, *args: str, mounts: Sequence[str] = (), env: Mapping[str, str] = ()) -> Any:
    """`docker run --rm` on the host's network; the finished process."""
    flags = [f"--volume={m}" for m in mounts] + [f"--env={k}={v}" for k, v in dict(env).items()]
    return docker("run", "--rm", "--network=host", *flags, image, *args, check=False)


@contextmanager
def volume() -> Iterator[str]:
    """A named volume of the test's own, removed afterwards."""
    name = f"codecite-test-{uuid.uuid4().hex[:8]}"
    docker("volume", "create", name)
    try:
        yield name
    finally:
        docker("volume", "rm", "--force", name, check=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:
        return 0, str(exc)


def wait_until(probe: Any, what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def readable_copy(tree: Path) -> None:
    """Let the container's user (uid 10001, owner of nothing here) read `tree`."""
    for path in [tree, *tree.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


class Compose:
    """`docker compose` (or Debian's v1 `docker-compose`) on the repository's compose file, in a
    project directory of the test's own, moved onto the host's network for CI's daemon (which
    has no bridge): compose itself renders the file (`config`), and `on_host_network` changes
    only where each service listens and what PostgreSQL image runs."""

    def __init__(self, project_dir: Path, env: Mapping[str, str]) -> None:
        self.project_dir = project_dir
        self.name = f"codecite-ci-{uuid.uuid4().hex[:8]}"
        self.env = {**os.environ, **env}
        if docker("compose", "version", check=False).returncode == 0:
            self.command = ["docker", "compose"]
        elif shutil.which("docker-compose"):
            self.command = ["docker-compose"]
        else:
            pytest.fail("neither `docker compose` nor `docker-compose` is installed")
        rendered = self._run("--file", str(COMPOSE_FILE), "config", timeout=60)
        assert rendered.returncode == 0, rendered.stderr
        self.file = project_dir / "compose.ci.yml"
        self.file.write_text(yaml.safe_dump(on_host_network(yaml.safe_load(rendered.stdout), env)))

    def __call__(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self._run("--file", str(self.file), *args, timeout=timeout)

    def _run(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        project = ["--project-directory", str(self.project_dir), "--project-name", self.name]
        return subprocess.run(
            [*self.command, *args[:2], *project, *args[2:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env,
            check=False,
        )

    def containers(self) -> dict[str, dict[str, Any]]:
        """service -> `docker inspect` of its container (every state, one-shots included)."""
        ids = docker(
            "ps", "--all", "--quiet", "--filter", f"label=com.docker.compose.project={self.name}"
        ).stdout.split()
        found = json.loads(docker("inspect", *ids).stdout) if ids else []
        return {c["Config"]["Labels"]["com.docker.compose.service"]: c for c in found}

    def down(self) -> None:
        self("down", "--volumes", "--remove-orphans", "--timeout", "30")


def on_host_network(config: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """The rendered compose file with every service on the host's network, each on the port
    `env` gives it (CI_PG_PORT, CI_WEB_PORT, CI_SCHEDULER_PORT), PostgreSQL from
    CODECITE_POSTGRES_IMAGE, and the repository CI_REPO mounted for the scheduler at
    /repos/shop. Everything else is the file as written."""
    services = config["services"]
    for service in services.values():
        service["network_mode"] = "host"
        service.pop("ports", None)  # published ports mean nothing on the host's network
        service.pop("build", None)
    pg_port = env["CI_PG_PORT"]
    postgres = services["postgres"]
    postgres["image"] = env["CODECITE_POSTGRES_IMAGE"]
    postgres["command"] = ["postgres", "-p", pg_port, "-c", "listen_addresses=127.0.0.1"]
    ready = ["pg_isready", "-h", "127.0.0.1", "-p", pg_port, "-U", "codecite", "-d", "codecite"]
    postgres["healthcheck"].update(test=["CMD", *ready], interval="1s")
    for name, service in services.items():
        environment = service.get("environment") or {}
        if "CODECITE_DATABASE_URL" in environment:
            url = environment["CODECITE_DATABASE_URL"]
            assert "@postgres:5432/" in url, url
            environment["CODECITE_DATABASE_URL"] = url.replace(
                "@postgres:5432/", f"@127.0.0.1:{pg_port}/"
            )
        port = env.get(f"CI_{name.upper()}_PORT")
        if port is not None and "PORT" in environment:
            environment["PORT"] = port
    services["scheduler"]["volumes"].append(f"{env['CI_REPO']}:/repos/shop:ro")
    return config
