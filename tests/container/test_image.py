"""The image CI built (issue 27, item 2), run as an operator runs it: `codecite --help`, an
index of a mounted repository and an answer from it, a mount the container's user cannot read,
and `serve` answering a signed Slack event through the fake Slack, with /healthz and /readyz.
See tests/support/containers.py for where these run and why they are skipped elsewhere.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers.slack_fake import FakeSlack
from tests.support.containers import (
    docker,
    free_port,
    get,
    image_under_test,
    readable_copy,
    run,
    volume,
    wait_until,
)
from tests.support.deployment import slack_env
from tests.support.gitrepo import GitRepo
from tests.support.slack_driver import CHANNEL, Driver, replies_in

# Containers start, build an index and stop within the waits below (up to 600 s for `up`);
# the suite's 120 s per test would cut them short on a loaded machine.
pytestmark = pytest.mark.timeout(900)

CART_PY = '''"""The shopping cart."""


def cart_total(prices, discount):
    """The sum of the prices, less the discount."""
    return sum(prices) - discount
'''
QUESTION = "where is cart_total defined?"
# Every path that loads a library, as the Dockerfile's build ran it to keep their bytecode.
IMAGE_PATHS = Path(__file__).parents[2] / "scripts" / "image_paths.py"


@pytest.fixture(scope="module")
def image() -> str:
    return image_under_test()


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    """A real repository on the host, owned by the host's user (not the container's)."""
    repo = GitRepo(tmp_path / "shop")
    repo.write("shop/cart.py", CART_PY)
    repo.commit("cart")
    readable_copy(tmp_path)
    return repo


@pytest.fixture
def indexed(image: str, shop: GitRepo) -> Iterator[str]:
    """A data volume holding the index of `shop`, made by `codecite index` in the image."""
    with volume() as data:
        done = run(
            image,
            "codecite",
            "index",
            "/src",
            "--name",
            "shop",
            mounts=[f"{shop.path}:/src:ro", f"{data}:/data"],
        )
        assert done.returncode == 0, done.stderr
        assert f"main@{shop.head()[:12]}" in done.stdout
        yield data


def test_the_image_runs_codecite_as_an_unprivileged_user(image: str) -> None:
    done = run(image, "codecite", "--help")
    assert done.returncode == 0 and "usage: codecite" in done.stdout, done.stderr
    [config] = json.loads(docker("image", "inspect", image).stdout)
    assert config["Config"]["User"] == "codecite"
    assert run(image, "id", "-u").stdout.strip() == "10001"


def test_every_module_imports_and_each_library_path_runs_in_the_image(
    image: str, tmp_path: Path
) -> None:
    """What the image's cuts must not break: every module of bot and adapters imports; a
    diagram is drawn (Pillow); Kingfisher finds secrets (its native library); psycopg's binary
    libpq loads; metrics; the OpenAI client; the CLI and `serve` (see scripts/image_paths.py)."""
    shutil.copy(IMAGE_PATHS, tmp_path / "image_paths.py")
    readable_copy(tmp_path)
    done = run(image, "python", "/check/image_paths.py", mounts=[f"{tmp_path}:/check:ro"])
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [line for line in done.stdout.splitlines() if line.startswith("image path: ")]
    assert len(ran) == 7, done.stdout
    assert "a diagram drawn" in done.stdout and "Kingfisher found slack-bot-token" in done.stdout


# Each installed distribution's licence files (METADATA's License-File) are in the image, as
# installed or gzipped (Kingfisher's notices): a gzipped one must decompress to the bytes pip's
# RECORD hashed at install time.
LICENCES = """
import base64, gzip, hashlib, importlib.metadata as md, sys
missing, checked = [], 0
for dist in md.distributions():
    record = {str(f): f.hash.value for f in dist.files or () if f.hash}
    for name in dist.metadata.get_all("License-File") or ():
        found = [f for f in dist.files or () if str(f).endswith("/" + name)]
        plain = [f for f in found if f.locate().exists()]
        packed = [f for f in found if f.locate().with_name(f.name + ".gz").exists()]
        if plain:
            checked += 1
        elif packed:
            data = gzip.decompress(packed[0].locate().with_name(packed[0].name + ".gz").read_bytes())
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest.decode() == record[str(packed[0])], packed[0]
            checked += 1
        else:
            missing.append(f"{dist.name}: {name}")
print(checked, missing)
sys.exit(1 if missing or not checked else 0)
"""


def test_every_licence_file_is_in_the_image(image: str) -> None:
    done = run(image, "python", "-c", LICENCES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_index_of_a_mounted_repository_answers_with_its_lines(image: str, indexed: str) -> None:
    done = run(image, "codecite", "ask", QUESTION, mounts=[f"{indexed}:/data"])
    assert done.returncode == 0, done.stderr
    assert "shop/cart.py:L4-L6" in done.stdout, done.stdout


def test_a_mount_the_container_user_cannot_read_is_one_line(image: str, shop: GitRepo) -> None:
    shop.path.chmod(0o700)  # the host's user keeps it to themselves
    with volume() as data:
        done = run(
            image, "codecite", "index", "/src", mounts=[f"{shop.path}:/src:ro", f"{data}:/data"]
        )
        logged = run(image, "sh", "-c", "cat /data/*.log 2>/dev/null", mounts=[f"{data}:/data"])
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: /src cannot be read by the user codecite runs as (uid 10001); "
        "make it readable to that user, or run codecite as its owner."
    ]
    assert "Traceback" not in logged.stdout and "incident" not in logged.stdout


def test_serve_answers_a_signed_slack_event_and_reports_health(image: str, indexed: str) -> None:
    port = free_port()
    with FakeSlack() as slack:
        slack.add_conversation(CHANNEL, "public")
        env = {**slack_env(slack), "PORT": str(port)}
        flags = [f"--env={k}={v}" for k, v in env.items()]
        started = docker(
            "run",
            "--detach",
            "--init",
            "--network=host",
            f"--volume={indexed}:/data",
            *flags,
            image,
            "codecite",
            "serve",
            "--slack",
            "--no-schedule",
        )
        container = started.stdout.strip()
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until(lambda: get(f"{base}/readyz")[0] == 200, "/readyz")
            assert get(f"{base}/healthz") == (200, "ok")
            asked = Driver(slack, f"{base}/slack/events").say(QUESTION)
            [reply] = slack.wait_for(lambda: replies_in(slack, CHANNEL, asked["ts"]) or None, 60)
            assert "shop/cart.py:L4-L6" in json.dumps(reply)
        finally:
            stopped = docker("stop", "--time", "30", container, check=False)
            logs = docker("logs", container, check=False)
            docker("rm", "--force", container, check=False)
    assert stopped.returncode == 0, stopped.stderr
    assert "Traceback" not in logs.stdout + logs.stderr
