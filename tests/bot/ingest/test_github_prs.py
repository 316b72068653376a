"""Pull-request titles from GitHub, against a strict fake of its REST API."""

from __future__ import annotations

import logging

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from tests.servers.github_fake import FakeGitHub
from tests.support.gitrepo import git
from tests.support.history_repo import build

TOKEN = "ghs_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def _repo(make_repo):  # type: ignore[no-untyped-def]
    repo = make_repo("demo")
    shas = build(repo)
    git(repo.path, "remote", "add", "origin", "https://github.com/demo/shop.git")
    return repo, shas


def test_titles_are_fetched_once_cached_and_searched(
    make_repo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    repo, shas = _repo(make_repo)
    with FakeGitHub(token=TOKEN) as gh:
        gh.pulls[("demo", "shop", 34)] = {
            "title": "Faster multiplication kernel",
            "body": "Why: speed",
        }
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("CODECITE_GITHUB_API_URL", gh.base_url)
        core = Core.from_settings(Settings(), FileConfig())
        with caplog.at_level(logging.DEBUG):
            core.index_repo(str(repo.path), name="demo")
        asked = sorted(path for _, path, _ in gh.requests)
        assert asked == ["/repos/demo/shop/pulls/12", "/repos/demo/shop/pulls/34"]
        assert TOKEN not in caplog.text  # never logged
        cached = core.stores.history.pull_requests("demo", [12, 34])
        assert cached[34].title == "Faster multiplication kernel" and cached[12].state == "missing"
        hits = core.search_commits("why was the multiplication kernel made faster?", CLI)
        assert hits and hits[0].commit.sha == shas["merge"]  # found by its PR's title alone
        (repo.path / "x.py").write_text("x = 1\n")
        git(repo.path, "add", "-A")
        git(repo.path, "commit", "-qm", "More (#34)")
        core.index_repo(str(repo.path), name="demo")
        assert len(gh.requests) == 2  # both numbers were cached
        core.close()


def test_rate_limits_end_the_enrichment_and_the_ingest_goes_on(
    make_repo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    repo, _ = _repo(make_repo)
    with FakeGitHub(token=TOKEN) as gh:
        gh.secondary_limit_next(1, retry_after=60)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("CODECITE_GITHUB_API_URL", gh.base_url)
        core = Core.from_settings(Settings(), FileConfig())
        report = core.index_repo(str(repo.path), name="demo")
        assert report.history is not None and report.history.commits > 0
        assert "retry after 60 s" in caplog.text and len(gh.requests) == 1
        assert core.stores.history.pull_requests("demo", [12, 34]) == {}  # asked again later
        (repo.path / "x.py").write_text("x = 1\n")
        git(repo.path, "add", "-A")
        git(repo.path, "commit", "-qm", "More (#35)")
        gh.remaining = 0  # the primary limit is used up: 403 with X-RateLimit-Reset
        report = core.index_repo(str(repo.path), name="demo")
        assert report.history is not None and report.history.commits_added == 1
        assert "rate limit is used up" in caplog.text
        core.close()


def test_a_wrong_token_is_refused_without_showing_it(
    make_repo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    repo, _ = _repo(make_repo)
    wrong = "ghs_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with FakeGitHub(token=TOKEN) as gh:
        monkeypatch.setenv("GITHUB_TOKEN", wrong)
        monkeypatch.setenv("CODECITE_GITHUB_API_URL", gh.base_url)
        core = Core.from_settings(Settings(), FileConfig())
        report = core.index_repo(str(repo.path), name="demo")
        assert report.history is not None and not report.history.failed
        assert "did not accept GITHUB_TOKEN" in caplog.text and wrong not in caplog.text
        assert core.stores.history.pull_requests("demo", [12, 34]) == {}
        core.close()
