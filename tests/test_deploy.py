"""The deployable shape: Procfile, Dockerfile, docker-compose.yml and the install script agree
with the CLI and with each other.

No container engine runs here, and PyYAML is not a dependency: the compose file is read
with a small line reader that understands the subset it is written in (top-level keys,
two-space indentation, commands and healthchecks as JSON-style flow lists). The install
script itself runs in every CI run through `make` (the venv is built with it).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest

from adapters.cli.main import build_parser
from tests.support.paths import ROOT

CODECITE_SERVICES = ("web", "discord", "scheduler")


def _parses(argv: list[str]) -> bool:
    try:
        build_parser().parse_args(argv)
    except SystemExit:
        return False
    return True


def compose_services() -> dict[str, list[str]]:
    """service name -> the lines of its block (indented by two spaces under `services:`)."""
    services: dict[str, list[str]] = {}
    inside, current = False, ""
    for line in (ROOT / "docker-compose.yml").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            inside = line.rstrip() == "services:"
            continue
        if inside and re.fullmatch(r"  [a-z][a-z0-9_-]*:", line):
            current = line.strip()[:-1]
            services[current] = []
        elif inside and current:
            services[current].append(line)
    return services


def _flow_list(block: list[str], key: str) -> list[str]:
    [line] = [ln for ln in block if ln.strip().startswith(f"{key}:")]
    return list(json.loads(line.split(":", 1)[1]))


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def test_compose_has_postgres_and_one_service_per_process() -> None:
    services = compose_services()
    assert sorted(services) == ["discord", "postgres", "scheduler", "web"]
    assert any("pg_isready" in line for line in services["postgres"])


@pytest.mark.parametrize("name", CODECITE_SERVICES)
def test_every_compose_command_is_a_codecite_command(name: str) -> None:
    command = _flow_list(compose_services()[name], "command")
    assert command[0] == "codecite"
    assert _parses(command[1:]), command


@pytest.mark.parametrize("name", CODECITE_SERVICES)
def test_every_codecite_service_is_health_checked_on_its_port(name: str) -> None:
    block = compose_services()[name]
    probe = " ".join(_flow_list(block, "test"))
    [port] = [ln.split(":", 1)[1].strip().strip('"') for ln in block if "PORT:" in ln]
    assert f"127.0.0.1:{port}/healthz" in probe
    text = "\n".join(block)
    assert "<<: *codecite" in text and "<<: *environment" in text


def test_compose_names_the_database_url_and_the_shared_volume() -> None:
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    assert "CODECITE_DATABASE_URL: postgresql://" in text
    assert "- data:/data" in text and "CODECITE_HOME: /data" in text


def test_procfile_processes_are_codecite_commands() -> None:
    processes = procfile()
    assert {"web", "discord", "scheduler"} <= set(processes)
    for line in processes.values():
        words = line.split()
        assert words[0] == "codecite" and _parses(words[1:]), line
    # `release: codecite migrate` belongs in the Procfile exactly when the command exists.
    assert ("release" in processes) == _parses(["migrate"])


def test_the_web_process_takes_port_from_the_platform() -> None:
    web = procfile()["web"].split()
    assert "--port" not in web  # PORT is read from the environment: nothing to pass
    assert web[:3] == ["codecite", "serve", "--slack"]


def test_dockerfile_installs_dependencies_before_the_source_and_runs_unprivileged() -> None:
    lines = [ln.strip() for ln in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()]
    steps = [ln for ln in lines if ln and not ln.startswith("#")]
    assert steps[0] == "FROM python:3.11-slim"
    index = {step: i for i, step in enumerate(steps)}
    deps = index["RUN sh scripts/install.sh deps /opt/venv"]
    app = index["RUN sh scripts/install.sh app /opt/venv"]
    source = min(i for s, i in index.items() if s.startswith(("COPY bot", "COPY adapters")))
    [manifest] = [s for s in steps[:deps] if s.startswith("COPY ") and "pyproject" in s]
    assert manifest == "COPY pyproject.toml ./"  # nothing else may invalidate the deps layer
    assert deps < source < app
    assert not any(s.startswith("COPY . ") for s in steps)  # one edit would rebuild all
    users = [s for s in steps if s.startswith("USER ")]
    assert users == ["USER codecite"] and index["USER codecite"] > app


def test_the_install_script_installs_what_pyproject_lists() -> None:
    listed = subprocess.run(
        ["sh", str(ROOT / "scripts" / "install.sh"), "print-deps"],
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    with (ROOT / "pyproject.toml").open("rb") as handle:
        assert listed == tomllib.load(handle)["project"]["dependencies"]


def test_the_install_script_refuses_an_unknown_step(tmp_path) -> None:
    result = subprocess.run(
        ["sh", str(ROOT / "scripts" / "install.sh"), "everything", str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "unknown step" in result.stderr
    assert not (tmp_path / "venv").exists()


def test_make_builds_its_venv_with_the_install_script() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "sh scripts/install.sh all $(VENV)" in makefile
