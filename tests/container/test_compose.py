"""docker-compose.yml run as a team runs it (issue 27, items 2 and 7), on the image CI built and
PostgreSQL from the same local base: the stack answers a signed Slack event through the fake
Slack; only the platform asked for starts; a missing or mis-mounted codecite.toml is one line
and nothing restarting. See tests/support/containers.py for where these run.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers.slack_fake import FakeSlack
from tests.support.containers import (
    POSTGRES_VARIABLE,
    Compose,
    free_port,
    get,
    image_under_test,
    readable_copy,
    wait_until,
)
from tests.support.deployment import slack_env
from tests.support.gitrepo import GitRepo
from tests.support.slack_driver import CHANNEL, Driver, replies_in

# Containers start, build an index and stop within the waits below (up to 600 s for `up`);
# the suite's 120 s per test would cut them short on a loaded machine.
pytestmark = pytest.mark.timeout(900)

CONFIG = '[[repos]]\nname = "shop"\npath = "/repos/shop"\n'
CART_PY = '''"""The shopping cart."""


def cart_total(prices, discount):
    """The sum of the prices, less the discount."""
    return sum(prices) - discount
'''


@pytest.fixture(scope="module")
def images() -> tuple[str, str]:
    image = image_under_test()
    postgres = os.environ.get(POSTGRES_VARIABLE, "")
    if not postgres:
        pytest.skip(f"{POSTGRES_VARIABLE} is not set: .ci/run builds it beside the image")
    return image, postgres


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_conversation(CHANNEL, "public")
        yield fake


@pytest.fixture
def stack(tmp_path: Path, images: tuple[str, str], slack: FakeSlack) -> Iterator[Compose]:
    """A project directory with a repository to index; `up` is the test's to run."""
    repo = GitRepo(tmp_path / "shop")
    repo.write("shop/cart.py", CART_PY)
    repo.commit("cart")
    project = tmp_path / "project"
    project.mkdir()
    readable_copy(tmp_path)
    image, postgres = images
    env = {
        **slack_env(slack),
        "CODECITE_IMAGE": image,
        "CODECITE_POSTGRES_IMAGE": postgres,
        "POSTGRES_PASSWORD": secrets.token_hex(12),
        "COMPOSE_PROFILES": "slack",
        "CI_REPO": str(repo.path),
        "CI_PG_PORT": str(free_port()),
        "CI_WEB_PORT": str(free_port()),
        "CI_SCHEDULER_PORT": str(free_port()),
    }
    compose = Compose(project, env)
    try:
        yield compose
    finally:
        compose.down()


def test_the_stack_answers_a_signed_slack_event_with_postgres_behind_it(
    stack: Compose, slack: FakeSlack
) -> None:
    (stack.project_dir / "codecite.toml").write_text(CONFIG)
    (stack.project_dir / "codecite.toml").chmod(0o644)
    up = stack("up", "--detach", "--no-build", timeout=600)
    assert up.returncode == 0, up.stderr
    web = f"http://127.0.0.1:{stack.env['CI_WEB_PORT']}"
    scheduler = f"http://127.0.0.1:{stack.env['CI_SCHEDULER_PORT']}"
    wait_until(lambda: get(f"{web}/readyz")[0] == 200, "the web service's /readyz")
    # The scheduler starts beside web, not before it: on a loaded machine it can be a few
    # seconds behind (once seen here as "connection refused" just after web was ready, load 12).
    wait_until(lambda: get(f"{scheduler}/healthz") == (200, "ok"), "the scheduler's /healthz")

    def indexed() -> bool:  # the scheduler's boot pass, seen through the shared database
        status = stack("exec", "-T", "web", "codecite", "status", timeout=60)
        return status.returncode == 0 and "shop" in status.stdout and "main@" in status.stdout

    wait_until(indexed, "the scheduler's first index of shop", timeout=180)
    asked = Driver(slack, f"{web}/slack/events").say("where is cart_total defined?")
    [reply] = slack.wait_for(lambda: replies_in(slack, CHANNEL, asked["ts"]) or None, 60)
    assert "shop/cart.py:L4-L6" in json.dumps(reply)

    found = stack.containers()
    assert sorted(found) == ["migrate", "postgres", "scheduler", "web"]  # no Discord service
    assert found["migrate"]["State"]["ExitCode"] == 0
    for name in ("scheduler", "web"):
        host = found[name]["HostConfig"]
        assert host["Init"] is True and host["RestartPolicy"]["Name"] == "unless-stopped"
        assert host["LogConfig"] == {
            "Type": "json-file",
            "Config": {"max-file": "5", "max-size": "10m"},
        }
        assert found[name]["Config"]["StopTimeout"] == 30
        assert found[name]["Config"]["User"] == "codecite"


def test_a_missing_codecite_toml_stops_up_with_one_line_naming_it(stack: Compose) -> None:
    up = stack("up", "--detach", "--no-build", timeout=600)
    assert up.returncode != 0
    config = stack.project_dir / "codecite.toml"
    assert not config.exists()  # not created as a directory on the way
    assert f"{config}" in up.stderr and "does not exist" in up.stderr, up.stderr
    running = {n: c["State"]["Status"] for n, c in stack.containers().items()}
    assert "scheduler" not in running and "web" not in running, running


def test_a_codecite_toml_that_is_a_directory_is_one_line_and_nothing_restarts(
    stack: Compose,
) -> None:
    """What an earlier `up` of a short-syntax mount left behind."""
    (stack.project_dir / "codecite.toml").mkdir()
    up = stack("up", "--detach", "--no-build", timeout=600)
    assert up.returncode != 0  # migrate did not complete: the bots never start
    logs = stack("logs", "--no-color", "migrate").stdout
    assert "error: Config file /config/codecite.toml is a directory, not a file" in logs, logs
    found = stack.containers()
    assert found["migrate"]["State"]["ExitCode"] == 2
    assert found["migrate"]["RestartCount"] == 0
    assert all(found[n]["State"]["Status"] != "running" for n in ("scheduler", "web") if n in found)
