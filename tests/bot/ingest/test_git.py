from __future__ import annotations

import base64
import dataclasses
import logging
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bot.errors import SourceError
from bot.ingest import git as git_module
from bot.ingest.catfile import BlobReader
from bot.ingest.git import Git, GitError, base_env
from bot.ingest.hosting import auth_env, parse_remote
from bot.ingest.sources import open_source
from tests.support.gitrepo import GitRepo, delete_object, git

MakeRepo = Callable[..., GitRepo]
SECRET = "s3cret-Pa55word"


@pytest.fixture(autouse=True)
def _no_user_git_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's ~/.gitconfig (credential helpers, rewrites) must not change results."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-gitconfig"))
    monkeypatch.delenv("GIT_CONFIG_COUNT", raising=False)


@pytest.fixture
def popen_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], dict[str, str]]]:
    """Every process started, with its argv and environment."""
    calls: list[tuple[list[str], dict[str, str]]] = []
    real = subprocess.Popen

    def spy(args: Any, *rest: Any, **kwargs: Any) -> Any:
        calls.append(([str(a) for a in args], dict(kwargs.get("env") or os.environ)))
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    return calls


# --- the runner ---------------------------------------------------------------------------


def test_run_returns_stdout_and_scrubs_secrets_from_errors(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.txt", "hello\n")
    repo.commit()
    runner = Git(repo.path, secrets=(SECRET,))
    assert runner.text("rev-parse", "HEAD") == repo.head()
    with pytest.raises(GitError) as caught:
        runner.run("show", f"no-such-ref-{SECRET}")
    assert SECRET not in str(caught.value)
    assert SECRET not in caught.value.stderr
    assert "***" in caught.value.stderr
    assert caught.value.user_message == "git show failed."
    assert runner.try_text("rev-parse", "--verify", "-q", "nope") is None


@pytest.mark.timeout(30)
def test_timeout_kills_git_and_its_children(tmp_path: Path) -> None:
    # If the helper survived the kill, communicate() would wait ten minutes for it.
    runner = Git(tmp_path)
    with pytest.raises(GitError, match="timed out"):
        runner.run("-c", "alias.hang=!sleep 600", "hang", timeout=0.5)


def test_missing_git_binary_is_a_source_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = Git(tmp_path, env={"PATH": str(tmp_path / "empty")})
    with pytest.raises(SourceError, match="git is not installed"):
        runner.run("version")


def test_base_env_never_prompts_nor_fetches_lazily() -> None:
    env = base_env({"EXTRA": "1"})
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_NO_LAZY_FETCH"] == "1"
    assert env["LC_ALL"] == "C"
    assert env["EXTRA"] == "1"


def test_this_git_honours_no_lazy_fetch(make_repo: MakeRepo, tmp_path: Path) -> None:
    """Reading a blob a blobless clone lacks fails at once instead of starting a fetch."""
    work = make_repo("up")
    work.write("a.py", "a = 1\n")
    work.commit()
    bare = work.bare_clone(tmp_path / "up.git")
    git(bare, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    url = f"file://{bare}"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", url, str(clone))
    blob = git(clone, "rev-parse", "HEAD:a.py")
    runner = Git(clone)
    with pytest.raises(GitError) as caught:
        runner.run("cat-file", "-p", blob)
    assert "lazy fetching disabled" in caught.value.stderr
    lazy = Git(clone, {k: v for k, v in base_env().items() if k != "GIT_NO_LAZY_FETCH"})
    assert lazy.text("cat-file", "-p", blob) == "a = 1"  # git would have fetched it


def test_every_command_runs_without_hooks_or_submodule_recursion(
    tmp_path: Path, popen_calls: list[tuple[list[str], dict[str, str]]]
) -> None:
    Git(tmp_path).try_text("version")
    argv = popen_calls[-1][0]
    assert argv[0] == "git" and argv[-1] == "version"
    config = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert {"core.hooksPath=/dev/null", "submodule.recurse=false", "core.fsmonitor=false"} <= set(
        config
    )


@pytest.fixture
def git_limits() -> Iterator[Callable[..., None]]:
    """Set GitLimits fields for one test; the defaults come back afterwards."""
    saved = git_module.limits()

    def apply(**changes: Any) -> None:
        git_module.configure(dataclasses.replace(saved, **changes))

    yield apply
    git_module.configure(saved)


def test_no_more_git_processes_run_at_once_than_the_limit(
    tmp_path: Path, git_limits: Callable[..., None]
) -> None:
    git_limits(max_processes=2)
    log_file = tmp_path / "spans.log"
    # Each command logs when it starts and ends, so the overlap is measured, not assumed.
    span = f"!echo start >> {log_file}; sleep 0.2; echo end >> {log_file}"
    runner = Git(tmp_path)
    threads = [
        threading.Thread(target=runner.run, args=("-c", f"alias.span={span}", "span"))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    running = peak = 0
    events = log_file.read_text().split()
    for event in events:
        running += 1 if event == "start" else -1
        peak = max(peak, running)
    assert events.count("start") == 6 and peak == 2


def test_a_reader_holds_a_slot_until_it_is_closed(
    blob_repo: tuple[GitRepo, dict[str, bytes]], git_limits: Callable[..., None]
) -> None:
    repo, blobs = blob_repo
    git_limits(max_processes=1, slot_wait=0.3)
    runner = Git(repo.path)
    with BlobReader(runner) as reader:
        reader.read(next(iter(blobs)))
        with pytest.raises(GitError, match="already running"):
            runner.run("rev-parse", "HEAD")
    assert runner.text("rev-parse", "HEAD") == repo.head()


@pytest.mark.timeout(30)
def test_a_silent_transfer_is_stopped_but_a_progressing_one_is_not(
    tmp_path: Path, git_limits: Callable[..., None]
) -> None:
    git_limits(stall_timeout=0.6)
    runner = Git(tmp_path)
    with pytest.raises(GitError, match="made no progress for 1 s"):
        runner.run("-c", "alias.hang=!sleep 600", "hang", transfer=True)
    talk = "!for i in 1 2 3 4 5 6; do echo . >&2; sleep 0.25; done; echo done"
    assert runner.text("-c", f"alias.talk={talk}", "talk", transfer=True) == "done"
    with pytest.raises(GitError, match="timed out"):  # quick commands keep their short limit
        runner.run("-c", f"alias.talk={talk}", "talk", timeout=0.5)


def test_input_larger_than_a_pipe_is_fed_while_output_is_read(
    blob_repo: tuple[GitRepo, dict[str, bytes]],
) -> None:
    repo, blobs = blob_repo
    oids = list(blobs) * 300  # ~1 MB in, ~1 MB out: neither fits a pipe buffer
    request = "".join(f"{oid}\n" for oid in oids).encode()
    out = Git(repo.path).run("cat-file", "--batch-check", input=request)
    assert len(out.splitlines()) == len(oids)


# --- credentials --------------------------------------------------------------------------


def test_github_token_becomes_an_extra_header_for_github_only() -> None:
    env, secrets = auth_env(parse_remote("https://github.com/o/r.git"), "ghp_TOKEN")
    expected = base64.b64encode(b"x-access-token:ghp_TOKEN").decode()
    assert env == {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.https://github.com/.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {expected}",
    }
    assert "ghp_TOKEN" in secrets and expected in secrets
    assert auth_env(parse_remote("https://gitlab.com/o/r.git"), "ghp_TOKEN") == ({}, ())
    assert auth_env(parse_remote("git@github.com:o/r.git"), "ghp_TOKEN") == ({}, ())
    assert auth_env(parse_remote("https://github.com/o/r.git"), None) == ({}, ())


def test_url_credentials_apply_to_their_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")  # the user's own entries stay in place
    env, secrets = auth_env(parse_remote("http://bob:pw@127.0.0.1:8080/r.git"), "ghp_TOKEN")
    assert env["GIT_CONFIG_COUNT"] == "3"
    assert env["GIT_CONFIG_KEY_2"] == "http.http://127.0.0.1:8080/.extraheader"
    assert env["GIT_CONFIG_VALUE_2"].endswith(base64.b64encode(b"bob:pw").decode())
    assert "pw" in secrets


# --- the blob reader ----------------------------------------------------------------------


@pytest.fixture
def blob_repo(tmp_path: Path) -> tuple[GitRepo, dict[str, bytes]]:
    repo = GitRepo(tmp_path / "blobs")
    contents = {f"f{i:03}.txt": f"file {i}\n".encode() * (i + 1) for i in range(80)}
    contents["big.bin"] = bytes(range(256)) * 12_000  # ~3 MB, larger than one pipe read
    contents["lines.txt"] = b"\n\n\nno trailing newline"
    contents["empty.txt"] = b""
    for name, data in contents.items():
        repo.write(name, data)
    repo.commit()
    oids = {name: git(repo.path, "rev-parse", f"HEAD:{name}") for name in contents}
    return repo, {oids[name]: data for name, data in contents.items()}


def test_read_many_streams_every_blob_through_one_process(
    blob_repo: tuple[GitRepo, dict[str, bytes]],
    popen_calls: list[tuple[list[str], dict[str, str]]],
) -> None:
    repo, blobs = blob_repo
    order = [*blobs, *list(blobs)[:5]]  # repeats are fine
    with BlobReader(Git(repo.path)) as reader:
        got = list(reader.read_many(order))
        assert reader.read(order[0]) == blobs[order[0]]
    assert [oid for oid, _ in got] == order
    assert all(data == blobs[oid] for oid, data in got)
    cat_files = [argv for argv, _ in popen_calls if "cat-file" in argv]
    assert len(cat_files) == 1


def test_abandoned_stream_leaves_the_reader_usable(
    blob_repo: tuple[GitRepo, dict[str, bytes]],
) -> None:
    repo, blobs = blob_repo
    oids = list(blobs)
    with BlobReader(Git(repo.path)) as reader:
        stream = reader.read_many(oids)
        for _ in range(3):
            next(stream)
        stream.close()
        assert dict(reader.read_many(oids[10:20])) == {o: blobs[o] for o in oids[10:20]}


def test_missing_and_malformed_object_ids(blob_repo: tuple[GitRepo, dict[str, bytes]]) -> None:
    repo, blobs = blob_repo
    with BlobReader(Git(repo.path)) as reader:
        with pytest.raises(SourceError, match="missing"):
            reader.read("0" * 40)
        with pytest.raises(SourceError, match="not an object id"):
            reader.read("HEAD:f001.txt")
        oid = next(iter(blobs))
        assert reader.read(oid) == blobs[oid]


def test_reader_times_out(blob_repo: tuple[GitRepo, dict[str, bytes]]) -> None:
    repo, blobs = blob_repo
    with BlobReader(Git(repo.path)) as reader:
        reader._timeout = 0.0
        with pytest.raises(SourceError, match="timed out"):
            reader.read(next(iter(blobs)))


# --- clones over smart HTTP with credentials ----------------------------------------------


class _GitHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, auth: str) -> None:
        super().__init__(("127.0.0.1", 0), _GitHTTPHandler)
        self.root = root
        self.auth = auth
        self.seen: list[str] = []  # the Authorization header of each request ("" if none)


class _GitHTTPHandler(BaseHTTPRequestHandler):
    """Smart HTTP via `git http-backend`, behind HTTP basic auth."""

    server: _GitHTTPServer

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        self.server.seen.append(self.headers.get("Authorization", ""))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.headers.get("Authorization", "").lower() != self.server.auth.lower():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        cgi = {
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "REMOTE_ADDR": "127.0.0.1",
        }
        out = subprocess.run(
            ["git", "http-backend"], input=body, env={**os.environ, **cgi}, capture_output=True
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def http_remote(make_repo: MakeRepo, tmp_path: Path) -> Iterator[tuple[_GitHTTPServer, GitRepo]]:
    work = make_repo("upstream")
    work.write("app.py", "def main():\n    return 1\n")
    work.commit("first")
    served = tmp_path / "served"
    served.mkdir()
    work.bare_clone(served / "repo.git")
    git(served / "repo.git", "config", "uploadpack.allowFilter", "true")
    auth = "Basic " + base64.b64encode(f"bob:{SECRET}".encode()).decode()
    server = _GitHTTPServer(served, auth)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server, work
    server.shutdown()
    server.server_close()


def test_url_credentials_reach_the_server_but_nothing_stored_or_logged(
    http_remote: tuple[_GitHTTPServer, GitRepo],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    popen_calls: list[tuple[list[str], dict[str, str]]],
) -> None:
    caplog.set_level(logging.DEBUG)
    server, work = http_remote
    port = server.server_address[1]
    home = tmp_path / "home"
    url = f"http://bob:{SECRET}@127.0.0.1:{port}/repo.git"
    source = open_source(url, home=home, name="app")
    assert source.checkout.source == f"http://127.0.0.1:{port}/repo.git"
    assert source.checkout.commit == work.head()
    assert [f.path for f in source.files()] == ["app.py"]
    assert server.seen and all(h.lower() == server.auth.lower() for h in server.seen)

    work.write("app.py", "def main():\n    return 2\n")
    work.commit("second")
    work.push(server.root / "repo.git")
    again = open_source(url, home=home, name="app")  # fetch authenticates the same way
    assert again.checkout.commit == work.head()
    assert "return 2" in again.read_text(next(again.files()))

    encoded = base64.b64encode(f"bob:{SECRET}".encode()).decode()
    config = (home / "repos" / "app" / ".git" / "config").read_text()
    assert SECRET not in config and encoded not in config
    assert all(SECRET not in arg for argv, _ in popen_calls for arg in argv)
    assert SECRET not in caplog.text and encoded not in caplog.text


def test_a_blob_the_http_remote_lacks_skips_only_its_file(
    http_remote: tuple[_GitHTTPServer, GitRepo], tmp_path: Path, make_repo: MakeRepo
) -> None:
    server, work = http_remote
    work.write("data.csv", "a,b\n" * 100)
    work.commit("data")
    served = server.root / "repo.git"
    work.push(served)
    delete_object(served, git(served, "rev-parse", "HEAD:data.csv"))
    port = server.server_address[1]
    source = open_source(f"http://bob:{SECRET}@127.0.0.1:{port}/repo.git", home=tmp_path / "h")
    assert [f.path for f in source.files()] == ["app.py"]
    assert source.skipped() == {"missing_blob": 1}


def test_wrong_credentials_are_an_access_error_without_the_secret(
    http_remote: tuple[_GitHTTPServer, GitRepo],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    server, _ = http_remote
    port = server.server_address[1]
    with pytest.raises(SourceError) as caught:
        open_source(f"http://bob:wrong-{SECRET}@127.0.0.1:{port}/repo.git", home=tmp_path / "h")
    assert caught.value.user_message == (
        f"Access to http://127.0.0.1:{port}/repo.git was denied; "
        "check GITHUB_TOKEN or the repository credentials."
    )
    assert SECRET not in str(caught.value) and SECRET not in caplog.text
    assert not (tmp_path / "h" / "repos" / "repo").exists()


def test_unreachable_host(tmp_path: Path) -> None:
    with socket_port() as port:
        pass  # closed again: nothing listens there now
    with pytest.raises(SourceError) as caught:
        open_source(f"http://tok:{SECRET}@127.0.0.1:{port}/r.git", home=tmp_path / "h")
    assert caught.value.user_message == "Could not reach 127.0.0.1."
    assert SECRET not in str(caught.value)


class socket_port:
    """A free local port, bound only inside the `with` block."""

    def __enter__(self) -> int:
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        port: int = self._sock.getsockname()[1]
        return port

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


def test_an_unreachable_host_is_retried_with_backoff_then_reported(tmp_path, monkeypatch):
    from bot.errors import SourceError
    from bot.ingest import clone as git_module
    from bot.ingest.hosting import parse_remote
    from bot.runtime.retry import Retrier, RetryPolicy

    waits: list[float] = []
    monkeypatch.setattr(
        git_module,
        "NETWORK_RETRY",
        Retrier(RetryPolicy(max_attempts=3, base_delay=1.0), sleep=waits.append),
    )
    remote = parse_remote("http://127.0.0.1:9/nothing-listens-here.git")  # discard port
    with pytest.raises(SourceError) as info:
        git_module.sync_clone(remote, tmp_path / "clone", None, None)
    assert "Could not reach 127.0.0.1" in info.value.user_message
    assert len(waits) == 2 and waits[1] > waits[0] * 0.5  # backoff between the three attempts


def test_a_missing_repository_is_not_retried(tmp_path, monkeypatch):
    from bot.errors import SourceError
    from bot.ingest import clone as git_module
    from bot.ingest.hosting import parse_remote
    from bot.runtime.retry import Retrier, RetryPolicy

    waits: list[float] = []
    monkeypatch.setattr(
        git_module, "NETWORK_RETRY", Retrier(RetryPolicy(max_attempts=3), sleep=waits.append)
    )
    with pytest.raises(SourceError):
        git_module.sync_clone(
            parse_remote(f"file://{tmp_path}/missing.git"), tmp_path / "c", None, None
        )
    assert waits == []
