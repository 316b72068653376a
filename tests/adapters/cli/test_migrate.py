"""`codecite migrate`: the release step that brings a database's schema up to date."""

from __future__ import annotations

from pathlib import Path

from bot.store.postgres.migrations import LATEST
from tests.support.cli import run_cli
from tests.support.postgres import PASSWORD


def test_migrate_applies_the_schema_once_then_has_nothing_to_do(
    database_url: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)  # the platform's variable
    first = run_cli(tmp_path / "home", "migrate")
    assert first.returncode == 0, first.stderr
    assert f"migrated to version {LATEST}" in first.stdout
    second = run_cli(tmp_path / "home", "migrate")
    assert second.returncode == 0 and f"already at version {LATEST}" in second.stdout
    assert PASSWORD not in first.stdout + first.stderr + second.stdout + second.stderr


def test_migrate_without_a_database_says_what_to_set(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "home", "migrate")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: Set CODECITE_DATABASE_URL")
    assert "Traceback" not in done.stderr


def test_migrate_against_an_unreachable_server_is_one_line_naming_the_host(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("CODECITE_DATABASE_URL", "postgresql://bot:hunter2@127.0.0.1:1/codecite")
    done = run_cli(tmp_path / "home", "migrate")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "127.0.0.1:1/codecite" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
    log = (tmp_path / "home" / "logs").glob("*")
    for path in log:
        assert "hunter2" not in path.read_text(errors="replace")


def test_migrate_reads_codecite_toml_first_so_a_broken_release_fails_before_it_starts(
    database_url: str, tmp_path: Path, monkeypatch
) -> None:
    """compose runs `migrate` before the bots, the Procfile's release before its processes:
    a config the processes would refuse stops it with the processes' one line, and the
    database is left as it was."""
    monkeypatch.setenv("CODECITE_DATABASE_URL", database_url)
    config = tmp_path / "codecite.toml"
    config.mkdir()  # what `docker run -v ./codecite.toml:...` mounts when the file is missing
    monkeypatch.setenv("CODECITE_CONFIG", str(config))
    done = run_cli(tmp_path / "home", "migrate")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"error: Config file {config} is a directory, not a file: write codecite.toml there."
    ]
    config.rmdir()
    config.write_text(
        '[[repos]]\nname = "shop"\nurl = "https://github.com/acme/shop.git"\nbranch = 3\n'
    )
    done = run_cli(tmp_path / "home", "migrate")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"error: {config}: repos.0.branch:" in done.stderr
    config.write_text('[[repos]]\nname = "shop"\nurl = "https://github.com/acme/shop.git"\n')
    done = run_cli(tmp_path / "home", "migrate")
    assert done.returncode == 0 and f"migrated to version {LATEST}" in done.stdout, done.stderr
