"""Scheduled re-ingest: triggers, jobs from codecite.toml, quick no-op runs, locking, webhooks."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import urllib.error
import urllib.request
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

from adapters.schedule import JOB_PREFIX, SYNC_JOB, IngestScheduler, make_trigger
from adapters.webhook import WebhookServer, signature_ok
from bot.config import FileConfig, RepoConfig, ScheduleConfig, Settings
from bot.core import CLI, Core
from bot.errors import ConfigError
from bot.store.locks import RepositoryBusy
from tests.servers.openai_fake import FakeOpenAI
from tests.support.jobs import running_jobs
from tests.support.shop import build_shop

UTC_ZONE = ZoneInfo("UTC")


def test_interval_trigger_arithmetic():
    trigger = make_trigger("15m", jitter=0, timezone=UTC_ZONE)
    previous = datetime(2026, 1, 7, 12, 0, tzinfo=UTC_ZONE)
    now = datetime(2026, 1, 7, 12, 1, tzinfo=UTC_ZONE)
    assert trigger.get_next_fire_time(previous, now) == datetime(
        2026, 1, 7, 12, 15, tzinfo=UTC_ZONE
    )
    two_hours = make_trigger("2h", jitter=0, timezone=UTC_ZONE)
    assert two_hours.get_next_fire_time(previous, now) == datetime(
        2026, 1, 7, 14, 0, tzinfo=UTC_ZONE
    )


def test_cron_uses_crontab_weekday_numbers():
    # crontab: 0 = Sunday. 2026-01-07 is a Wednesday; the next Sunday 09:00 is the 11th.
    trigger = make_trigger("0 9 * * 0", jitter=0, timezone=UTC_ZONE)
    now = datetime(2026, 1, 7, 12, 0, tzinfo=UTC_ZONE)
    assert trigger.get_next_fire_time(None, now) == datetime(2026, 1, 11, 9, 0, tzinfo=UTC_ZONE)


def test_jitter_stays_within_bounds():
    trigger = make_trigger("10m", jitter=30, timezone=UTC_ZONE)
    now = datetime(2026, 1, 7, 12, 0, tzinfo=UTC_ZONE)
    prev = datetime(2026, 1, 7, 11, 55, tzinfo=UTC_ZONE)
    for _ in range(20):
        fire = trigger.get_next_fire_time(prev, now)
        delta = (fire - datetime(2026, 1, 7, 12, 5, tzinfo=UTC_ZONE)).total_seconds()
        assert -30 <= delta <= 30


@pytest.mark.parametrize("spec", ["0m", "fast", "* * *", "61 * * * *", "5 x"])
def test_bad_schedules_are_config_errors(spec):
    with pytest.raises(ConfigError):
        make_trigger(spec, jitter=0, timezone=UTC_ZONE)


@pytest.fixture
def remote(make_repo, tmp_path):
    work = make_repo("work")
    build_shop(work)
    bare = work.bare_clone(tmp_path / "shop.git")
    return work, bare


def _scheduler(core: Core) -> IngestScheduler:
    sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone=UTC_ZONE))
    sched.install()
    sched.start(paused=True)
    return sched


def _config(*repos: RepoConfig) -> FileConfig:
    return FileConfig(repos=repos, schedule=ScheduleConfig(interval="15m", jitter_seconds=0))


def test_jobs_follow_the_configuration(remote):
    _, bare = remote
    shop = RepoConfig(name="shop", url=f"file://{bare}")
    core = Core.from_settings(Settings(), _config(shop))
    sched = _scheduler(core)
    try:
        job = sched.scheduler.get_job(JOB_PREFIX + "shop")
        assert job is not None and job.max_instances == 1 and job.coalesce
        assert sched.scheduler.get_job(SYNC_JOB) is not None
        sched.run_repo("shop", "schedule")
        assert [s.name for s in core.index.repo_states()] == ["shop"]
        assert core.symbols is not None and core.symbols.repos() == ["shop"]
        assert (core.settings.home / "repos" / "shop").is_dir()
        # the repository leaves codecite.toml: it is forgotten (job, index, symbols, runs, clone)
        sched.apply_config(_config())
        assert sched.scheduler.get_job(JOB_PREFIX + "shop") is None
        assert core.index.repo_states() == []
        assert core.symbols.repos() == []
        assert core.runs.last("shop") is None and core.runs.next_run("shop") is None
        assert not (core.settings.home / "repos" / "shop").exists()
        assert "shop" not in core.run_command("status", CLI).text
    finally:
        sched.shutdown()


def test_a_repository_that_left_the_config_while_busy_is_forgotten_at_a_later_sync(
    remote, monkeypatch, caplog
):
    _, bare = remote
    core = Core.from_settings(Settings(), _config(RepoConfig(name="shop", url=f"file://{bare}")))
    sched = _scheduler(core)
    try:
        sched.run_repo("shop", "schedule")
        monkeypatch.setattr("bot.jobs.forget.LOCK_WAIT", 0.0)
        monkeypatch.setattr(core, "load_config", lambda: _config())  # codecite.toml, as edited
        with core.stores.locks.hold("shop"):  # an ingest of it still runs
            sched.sync_config()
        assert sched.scheduler.get_job(JOB_PREFIX + "shop") is None
        assert [s.name for s in core.index.repo_states()] == ["shop"]
        assert "shop left codecite.toml but is not forgotten yet" in caplog.text
        sched.sync_config()  # the next minute's sync
        assert core.index.repo_states() == [] and core.runs.last("shop") is None
    finally:
        sched.shutdown()


def test_unchanged_remote_costs_nothing_and_a_push_is_picked_up(remote):
    work, bare = remote
    with FakeOpenAI() as fake:
        env = {"OPENAI_API_KEY": "sk-test-abcdef", "OPENAI_BASE_URL": fake.base_url}
        core = Core.from_settings(
            Settings(**env), _config(RepoConfig(name="shop", url=f"file://{bare}"))
        )
        sched = _scheduler(core)
        try:
            first = sched.run_repo("shop", "schedule")
            assert first is not None and first.embedded_inputs > 0
            calls = fake.embedding_calls
            clone = core.settings.home / "repos" / "shop"
            fetch_head = clone / ".git" / "FETCH_HEAD"
            before = fetch_head.stat().st_mtime_ns if fetch_head.exists() else None

            again = sched.run_repo("shop", "schedule")
            assert again is not None and again.unchanged
            assert fake.embedding_calls == calls
            after = fetch_head.stat().st_mtime_ns if fetch_head.exists() else None
            assert after == before  # no fetch at all: ls-remote said nothing moved

            work.write("shop/new_feature.py", "def brand_new_feature():\n    return 42\n")
            work.commit("feature")
            work.push(bare)
            third = sched.run_repo("shop", "schedule")
            assert third is not None and third.files_added == 1
            assert fake.embedding_calls == calls + 1
            assert (
                core.search("brand_new_feature", CLI, top_k=1)[0].chunk.path
                == "shop/new_feature.py"
            )
            status = core.run_command("status", CLI).text
            assert "last run" in status and "schedule" in status
        finally:
            sched.shutdown()


def test_changed_rules_force_a_full_run(remote):
    _, bare = remote
    core = Core.from_settings(Settings(), _config(RepoConfig(name="shop", url=f"file://{bare}")))
    sched = _scheduler(core)
    try:
        sched.run_repo("shop", "schedule")
        assert "README.md" in core.index.manifest("shop")
        narrowed = RepoConfig(name="shop", url=f"file://{bare}", exclude=("*.md",))
        sched.apply_config(_config(narrowed))
        report = sched.run_repo("shop", "schedule")
        assert report is not None and report.files_removed == 1
        assert "README.md" not in core.index.manifest("shop")
    finally:
        sched.shutdown()


def test_rules_in_force_at_start_apply_at_once(remote):
    """A repository indexed before its `exclude` rule was written: the scheduler's first run
    applies the rule although the remote head has not moved; the next one is quick."""
    _, bare = remote
    url = f"file://{bare}"
    core = Core.from_settings(Settings(), _config())
    core.index_repo(url, name="shop")
    assert "README.md" in core.index.manifest("shop")
    core.use_config(_config(RepoConfig(name="shop", url=url, exclude=("*.md",))))
    sched = _scheduler(core)
    try:
        first = sched.run_repo("shop", "schedule")
        assert first is not None and first.files_removed == 1 and not first.unchanged
        assert "README.md" not in core.index.manifest("shop")
        again = sched.run_repo("shop", "schedule")
        assert again is not None and again.unchanged
    finally:
        sched.shutdown()


def test_never_two_ingests_of_one_repository(remote):
    _, bare = remote
    core = Core.from_settings(Settings(), _config(RepoConfig(name="shop", url=f"file://{bare}")))
    sched = _scheduler(core)
    try:
        with core.stores.locks.hold("shop", wait=0):
            assert sched.run_repo("shop", "schedule") is None  # busy: skipped, not queued twice
            with pytest.raises(RepositoryBusy):
                core.index_repo(f"file://{bare}", name="shop", wait=0)
        assert sched.run_repo("shop", "schedule") is not None
    finally:
        sched.shutdown()


def test_failed_run_is_recorded_and_shown(tmp_path):
    core = Core.from_settings(
        Settings(), _config(RepoConfig(name="gone", url=f"file://{tmp_path}/missing.git"))
    )
    sched = _scheduler(core)
    try:
        assert sched.run_repo("gone", "schedule") is None
        last = core.runs.last("gone")
        assert last is not None and not last.ok and last.error
    finally:
        sched.shutdown()


def _post(port: int, body: bytes, headers: dict[str, str]) -> int:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhooks/github", data=body, headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _signed(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def test_push_webhook_schedules_an_immediate_run():
    url = "https://github.com/acme/shop.git"
    core = Core.from_settings(Settings(), _config(RepoConfig(name="shop", url=url)))
    sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone=UTC_ZONE))
    sched.apply_config(core.config)
    sched.start(paused=True)
    job = sched.scheduler.get_job(JOB_PREFIX + "shop")
    job.modify(next_run_time=datetime(2099, 1, 1, tzinfo=UTC))
    server = WebhookServer(sched, "hook-secret", port=0, host="127.0.0.1")
    server.start()
    try:
        push = json.dumps(
            {"repository": {"clone_url": url, "ssh_url": "git@github.com:acme/shop.git"}}
        )
        body = push.encode()
        bad = _post(
            server.port, body, {"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=00"}
        )
        assert bad == 401
        assert sched.scheduler.get_job(JOB_PREFIX + "shop").next_run_time.year == 2099
        ok = _post(
            server.port,
            body,
            {"X-GitHub-Event": "push", "X-Hub-Signature-256": _signed(b"hook-secret", body)},
        )
        assert ok == 202
        assert sched.scheduler.get_job(JOB_PREFIX + "shop").next_run_time.year < 2099
        other = json.dumps({"repository": {"clone_url": "https://github.com/x/y.git"}}).encode()
        headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": _signed(b"hook-secret", other)}
        assert _post(server.port, other, headers) == 404
        ping = b"{}"
        headers = {"X-GitHub-Event": "ping", "X-Hub-Signature-256": _signed(b"hook-secret", ping)}
        assert _post(server.port, ping, headers) == 200
    finally:
        server.stop()
        sched.shutdown()


def test_signature_check():
    body = b'{"a": 1}'
    assert signature_ok(b"s", body, _signed(b"s", body))
    assert not signature_ok(b"s", body, _signed(b"t", body))
    assert not signature_ok(b"s", body, "sha1=abc")
    assert not signature_ok(b"s", body, "")


def test_the_first_run_of_a_never_indexed_repository_is_the_boot_run(remote, make_repo):
    _, bare = remote
    indexed = make_repo("billing")
    build_shop(indexed)
    shop = RepoConfig(name="shop", url=f"file://{bare}")
    billing = RepoConfig(name="billing", path=str(indexed.path))
    core = Core.from_settings(Settings(), _config(shop, billing))
    core.index_repo(str(indexed.path), name="billing")
    sched = _scheduler(core)
    try:
        before = datetime.now(UTC)
        for name in ("shop", "billing"):  # both due at once: nothing waits for the interval
            job = sched.scheduler.get_job(JOB_PREFIX + name)
            assert (job.next_run_time - before).total_seconds() < 60
        report = sched.run_repo("shop", "schedule")  # the job's first run
        assert report is not None and report.chunks > 0
        assert [core.runs.last(n).trigger for n in ("shop", "billing")] == ["boot", "cli"]
        sched.run_repo("billing", "schedule")  # indexed before boot: an ordinary check
        assert core.runs.last("billing").trigger == "schedule"
        sched.run_repo("shop", "schedule")  # once
        assert core.runs.last("shop").trigger == "schedule"
    finally:
        sched.shutdown()


def test_a_started_scheduler_indexes_never_indexed_repositories_at_once(remote, caplog):
    _, bare = remote
    core = Core.from_settings(Settings(), _config(RepoConfig(name="shop", url=f"file://{bare}")))
    assert core.never_indexed() == ["shop"]
    sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone=UTC_ZONE))
    caplog.set_level("INFO", logger="adapters.schedule")
    sched.install()
    sched.start()
    try:
        deadline = datetime.now(UTC).timestamp() + 60

        def done() -> bool:  # the run is logged as finished just after the index has it
            last = core.runs.last("shop")
            return not core.never_indexed() and last is not None and last.state != "running"

        while not done() and datetime.now(UTC).timestamp() < deadline:
            threading.Event().wait(0.05)
        assert core.never_indexed() == []
        last = core.runs.last("shop")
        assert last is not None and last.trigger == "boot" and last.ok
        assert any("boot: indexing shop" in r.getMessage() for r in caplog.records)
    finally:
        sched.shutdown()


def test_a_push_records_a_job_that_the_schedulers_runner_runs(remote):
    from adapters.webhook import QueuedReindex

    work, bare = remote
    url = f"file://{bare}"
    core = Core.from_settings(Settings(), _config(RepoConfig(name="shop", url=url)))
    server = WebhookServer(QueuedReindex(core), "hook-secret", port=0, host="127.0.0.1")
    server.start()
    try:
        body = json.dumps({"repository": {"clone_url": url}}).encode()
        headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": _signed(b"hook-secret", body)}
        assert _post(server.port, body, headers) == 202
        assert _post(server.port, body, headers) == 202  # joins the queued job
        job = core.stores.jobs.claim("peek", lease=0.1)  # the web process ingested nothing
        assert job is not None and (job.repo, job.trigger, job.quick) == ("shop", "webhook", True)
        assert core.stores.jobs.claim("peek", lease=0.1) is None  # one job for both pushes
        assert core.index.repo_states() == [] and core.runs.last("shop") is None
        threading.Event().wait(0.2)  # the peek's lease ends: the job is runnable again
        with running_jobs(core):
            deadline = datetime.now(UTC).timestamp() + 60
            while not core.index.repo_states() and datetime.now(UTC).timestamp() < deadline:
                threading.Event().wait(0.05)
        [state] = core.index.repo_states()
        assert state.commit == work.head()
        last = core.runs.last("shop")
        assert last is not None and last.trigger == "webhook"
        other = json.dumps({"repository": {"clone_url": "https://github.com/x/y.git"}}).encode()
        headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": _signed(b"hook-secret", other)}
        assert _post(server.port, other, headers) == 404
    finally:
        server.stop()
