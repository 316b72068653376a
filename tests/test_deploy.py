"""The deployable shape: Procfile, Dockerfile, docker-compose.yml and the install script agree
with the CLI, with the settings codecite reads, and with each other.

The compose file is read with PyYAML as compose reads it (anchors and `<<` merges resolved).
CI also validates it with compose itself and runs the stack (tests/container/); the lock and
the Python buildpack's rules are in tests/test_lock.py.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest
import yaml
from pydantic_settings import BaseSettings

from adapters.cli.main import build_parser
from adapters.discord.settings import DiscordSettings
from adapters.slack.settings import SlackSettings
from bot.config import Settings
from tests.support.paths import ROOT

BOTS = ("scheduler", "web", "discord")  # the long-running codecite services
CODECITE_SERVICES = ("migrate", *BOTS)
PLATFORM_SERVICES = {"web": (SlackSettings, "slack"), "discord": (DiscordSettings, "discord")}
# Set by compose itself, not passed through: where the data, the config and the database are.
FIXED = {"CODECITE_HOME", "CODECITE_CONFIG", "CODECITE_DATABASE_URL", "DATABASE_URL", "PORT"}


def _parses(argv: list[str]) -> bool:
    try:
        build_parser().parse_args(argv)
    except SystemExit:
        return False
    return True


def compose() -> dict[str, Any]:
    with (ROOT / "docker-compose.yml").open(encoding="utf-8") as handle:
        return dict(yaml.safe_load(handle))


def services() -> dict[str, dict[str, Any]]:
    return dict(compose()["services"])


def variables(model: type[BaseSettings]) -> set[str]:
    """Every environment variable a settings class reads."""
    return {
        name
        for field in model.model_fields.values()
        for name in getattr(field.validation_alias, "choices", ())
        if isinstance(name, str)
    }


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def dockerfile_steps() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [ln.strip() for ln in joined.splitlines() if ln.strip()]


# -- docker-compose.yml ----------------------------------------------------------------------


def test_compose_has_postgres_a_migration_and_one_service_per_process() -> None:
    found = services()
    assert sorted(found) == ["discord", "migrate", "postgres", "scheduler", "web"]
    assert "pg_isready" in " ".join(found["postgres"]["healthcheck"]["test"])


@pytest.mark.parametrize("name", CODECITE_SERVICES)
def test_every_compose_command_is_a_codecite_command(name: str) -> None:
    command = services()[name]["command"]
    assert command[0] == "codecite" and _parses(command[1:]), command


def test_the_migration_is_the_procfiles_release_step_and_runs_once() -> None:
    migrate = services()["migrate"]
    assert " ".join(migrate["command"]) == procfile()["release"]
    assert migrate["restart"] == "no"
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}


@pytest.mark.parametrize("name", BOTS)
def test_every_bot_waits_for_the_database_and_the_migration(name: str) -> None:
    assert services()[name]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }


@pytest.mark.parametrize("name", BOTS)
def test_every_bot_is_health_checked_on_its_own_port(name: str) -> None:
    service = services()[name]
    probe = " ".join(service["healthcheck"]["test"])
    assert "/healthz" in probe and "os.environ['PORT']" in probe
    assert service["environment"]["PORT"] == "8080"
    assert service["restart"] == "unless-stopped"


def test_only_the_platforms_a_team_asks_for_start() -> None:
    """A Slack-only team runs no Discord service: each platform's service has its profile."""
    found = services()
    assert {n: s.get("profiles") for n, s in found.items() if s.get("profiles")} == {
        "web": ["slack"],
        "discord": ["discord"],
    }


@pytest.mark.parametrize("name", ["postgres", *CODECITE_SERVICES])
def test_every_service_rotates_its_logs(name: str) -> None:
    logging = services()[name]["logging"]
    assert logging["driver"] == "json-file"
    assert set(logging["options"]) == {"max-size", "max-file"}


@pytest.mark.parametrize("name", CODECITE_SERVICES)
def test_every_codecite_service_has_an_init_and_the_shutdown_grace(name: str) -> None:
    """PID 1 is an init (it reaps git and ingest children); compose waits 30 s before SIGKILL,
    past the 25 s codecite's own shutdown gives answers in flight."""
    service = services()[name]
    assert service["init"] is True
    assert service["stop_grace_period"] == "30s"


@pytest.mark.parametrize("name", CODECITE_SERVICES)
def test_a_missing_codecite_toml_is_not_mounted_as_a_directory(name: str) -> None:
    """The long syntax: compose refuses to start (naming the file) rather than create it."""
    [config] = [v for v in services()[name]["volumes"] if isinstance(v, dict)]
    assert config == {
        "type": "bind",
        "source": "./codecite.toml",
        "target": "/config/codecite.toml",
        "read_only": True,
    }
    assert services()[name]["environment"]["CODECITE_CONFIG"] == "/config/codecite.toml"
    assert "data:/data" in services()[name]["volumes"]


def test_the_database_password_is_required_not_defaulted() -> None:
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    uses = re.findall(r"\$\{POSTGRES_PASSWORD([^}]*)\}", text)
    assert uses and all(use.startswith(":?") for use in uses), uses
    found = services()
    assert found["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    for name in CODECITE_SERVICES:
        url = found[name]["environment"]["CODECITE_DATABASE_URL"]
        assert (
            url.startswith("postgresql://codecite:${POSTGRES_PASSWORD:?")
            and "@postgres:5432/" in url
        )


@pytest.mark.parametrize("name", CODECITE_SERVICES)
def test_every_setting_codecite_reads_can_be_passed(name: str) -> None:
    """Each variable of the settings classes reaches the services that read it."""
    environment = services()[name]["environment"]
    wanted = variables(Settings) - FIXED
    for service, (model, _) in PLATFORM_SERVICES.items():
        if service == name:
            wanted |= variables(model)
    missing = sorted(wanted - set(environment))
    assert not missing, f"add to {name}'s environment in docker-compose.yml: {missing}"
    passed = {k for k, v in environment.items() if v is None}
    assert wanted <= passed | FIXED  # taken from the shell (or .env), never a value in the file


def test_no_platforms_secrets_reach_the_other_platforms_service() -> None:
    found = services()
    assert not variables(SlackSettings) & set(found["discord"]["environment"])
    assert not variables(DiscordSettings) & set(found["web"]["environment"])


# -- Procfile --------------------------------------------------------------------------------


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


def test_compose_runs_what_the_procfile_runs() -> None:
    found = services()
    for process, line in procfile().items():
        service = {"release": "migrate"}.get(process, process)
        assert " ".join(found[service]["command"]) == line


# -- Dockerfile and .dockerignore ------------------------------------------------------------


def test_the_base_image_is_a_build_argument_of_the_locked_python() -> None:
    steps = dockerfile_steps()
    version = (ROOT / ".python-version").read_text(encoding="utf-8").strip()
    assert steps[0] == f"ARG BASE=python:{version}-slim"
    assert [s for s in steps if s.startswith("FROM ${BASE}")] == ["FROM ${BASE} AS system"]


def test_the_image_is_built_in_stages_and_runs_only_what_it_needs() -> None:
    steps = dockerfile_steps()
    froms = [s for s in steps if s.startswith("FROM ")]
    assert froms == ["FROM ${BASE} AS system", "FROM system AS build", "FROM scratch"]
    final = steps[steps.index("FROM scratch") :]
    # The build stage, slimmed and with its sources removed (its last RUN), flattened.
    assert [s for s in final if s.startswith("COPY ")] == ["COPY --from=build / /"]
    assert "rm -rf /src" in steps[steps.index("FROM scratch") - 1]
    assert [s for s in final if s.startswith("USER ")] == ["USER codecite"]
    assert not any(s.startswith("USER ") for s in steps[: steps.index("FROM scratch")])


def test_the_locked_set_is_installed_before_the_source_is_copied() -> None:
    steps = dockerfile_steps()
    build = steps[steps.index("FROM system AS build") : steps.index("FROM scratch")]
    index = {step: i for i, step in enumerate(build)}
    deps = index["RUN sh scripts/install.sh deps /opt/venv"]
    app = next(i for s, i in index.items() if s.startswith("RUN") and "install.sh app" in s)
    before = [s for s in build[:deps] if s.startswith("COPY ")]
    assert before == [  # nothing else may invalidate the dependencies' layer
        "COPY requirements/app.txt requirements/app.txt",
        "COPY scripts/install.sh scripts/install.sh",
    ]
    source = min(i for s, i in index.items() if s.startswith(("COPY bot", "COPY adapters")))
    assert deps < source < app
    assert not any(s.startswith("COPY . ") for s in steps)  # one edit would rebuild all


def test_the_build_context_is_only_what_the_dockerfile_copies() -> None:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]
    assert patterns[0] == "*"  # everything out (.git, .venv, data, tests), then what is needed
    kept = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    copied = set()
    for step in dockerfile_steps():
        if step.startswith("COPY ") and "--from=" not in step:
            copied |= set(step.split()[1:-1])
    assert kept == {c.rstrip("/") for c in copied}


# -- the install script and make -----------------------------------------------------------


def test_the_install_script_installs_only_hash_checked_locked_sets() -> None:
    script = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    installs = [ln.strip() for ln in script.splitlines() if re.search(r"\bpip install\b", ln)]
    assert installs == [
        'deps | all) pip install --require-hashes -r "$locked" ;;',
        'pip install --no-deps --no-build-isolation -e "$root"',
        'pip install --no-deps --no-build-isolation "$root"',
    ]
    assert "--upgrade" not in script


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["everything", "VENV"], "unknown step: everything"),
        (["deps", "VENV", "nightly"], "no locked set"),
    ],
)
def test_the_install_script_refuses_what_it_does_not_know(
    tmp_path, args: list[str], message: str
) -> None:
    argv = [a.replace("VENV", str(tmp_path / "venv")) for a in args]
    result = subprocess.run(
        ["sh", str(ROOT / "scripts" / "install.sh"), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and message in result.stderr
    assert not (tmp_path / "venv").exists()


def test_make_builds_every_venv_with_the_install_script() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "sh scripts/install.sh all $(VENV) app" in makefile
    assert "sh scripts/install.sh deps $(VENV) dev" in makefile
    assert "sh scripts/install.sh all .venv-bench bench" in makefile
    assert "pip install" not in makefile


def _make_demo(*overrides: str) -> str:
    done = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "demo", *overrides],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_demo_keeps_its_data_in_the_checkout_and_names_the_repository_codecite() -> None:
    planned = _make_demo("BIN=/venv/bin")  # -n: the commands make would run, none run
    home = f'CODECITE_HOME="{ROOT}/.codecite"'
    index, chat = (ln for ln in planned.splitlines() if "/venv/bin/codecite" in ln)
    for line in (index, chat):
        assert home in line and "-u CODECITE_DATABASE_URL -u DATABASE_URL" in line, line
    assert index.endswith(f'/venv/bin/codecite index "{ROOT}" --name codecite'), index
    assert f"data directory {ROOT}/.codecite" in planned  # printed for the user
    other = _make_demo("BIN=/venv/bin", "REPO=https://github.com/acme/shop.git")
    [line] = [ln.rstrip() for ln in other.splitlines() if "codecite index" in ln]
    assert line.endswith('index "https://github.com/acme/shop.git"'), line  # named by its URL
