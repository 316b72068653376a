"""A process killed mid-ingest leaves the previous state answering; the next run converges."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from tests.servers.openai_fake import FakeOpenAI
from tests.support.shop import build_shop

ROOT = Path(__file__).resolve().parents[1]


def test_sigkill_during_ingest(make_repo, tmp_path):
    repo = make_repo("shop")
    build_shop(repo)
    with FakeOpenAI() as fake:
        env = {
            **os.environ,
            "CODECITE_HOME": str(tmp_path / "home"),
            "OPENAI_API_KEY": "sk-test-abcdef",
            "OPENAI_BASE_URL": fake.base_url,
        }
        first = subprocess.run(
            [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert first.returncode == 0, first.stderr
        old_commit = repo.head()
        for i in range(40):
            repo.write(f"shop/gen/module_{i}.py", f"def generated_feature_{i}():\n    return {i}\n")
        repo.commit("many new files")

        fake.delay_next(60)  # the embedding call hangs: the process is mid-ingest
        seen = len(fake.requests)
        proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(fake.requests) == seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(fake.requests) > seen, "the ingest never reached the embedding step"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)

        core = Core.from_settings(Settings(), FileConfig())  # conftest points CODECITE_HOME there
        state = core.index.repo_states()[0]
        assert state.commit == old_commit
        assert not any(
            h.chunk.path.startswith("shop/gen/")
            for h in core.search("generated_feature_3", CLI, top_k=20)
        )
        assert (
            core.search("retry failed webhooks", CLI, top_k=1)[0].chunk.path == "shop/webhooks.py"
        )
        core.close()

        again = subprocess.run(
            [sys.executable, "-m", "adapters.cli.main", "index", str(repo.path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
    core = Core.from_settings(Settings(), FileConfig())
    assert core.index.repo_states()[0].commit == repo.head()
    assert core.search("generated_feature_3", CLI, top_k=1)[0].chunk.path == "shop/gen/module_3.py"
    core.close()
