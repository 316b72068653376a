from __future__ import annotations

import pytest

from bot.answer.permalinks import permalink
from bot.errors import SourceError
from bot.ingest.hosting import is_url, parse_remote, redact, web_url_for


@pytest.mark.parametrize(
    ("remote", "web"),
    [
        ("https://github.com/o/r.git", "https://github.com/o/r"),
        ("https://github.com/o/r", "https://github.com/o/r"),
        ("https://github.com/o/r.git/", "https://github.com/o/r"),
        ("https://www.github.com/o/r.git", "https://github.com/o/r"),
        ("https://x-access-token:ghp_abc@github.com/o/r.git", "https://github.com/o/r"),
        ("git@github.com:o/r.git", "https://github.com/o/r"),
        ("ssh://git@github.com/o/r.git", "https://github.com/o/r"),
        ("git://github.com/o/r.git", "https://github.com/o/r"),
        ("ssh://git@gitlab.com/g/sub/r.git", "https://gitlab.com/g/sub/r"),
        ("git@gitlab.example.com:team/r.git", "https://gitlab.example.com/team/r"),
        ("ssh://git@git.corp.example:2222/team/r.git", "https://git.corp.example/team/r"),
        ("https://bitbucket.org/o/r", "https://bitbucket.org/o/r"),
        ("https://user@bitbucket.org/o/r.git", "https://bitbucket.org/o/r"),
        ("http://git.internal:8080/team/r.git", "http://git.internal:8080/team/r"),
        ("file:///srv/git/r.git", ""),
        ("/home/me/r", ""),
        ("", ""),
        ("not a url", ""),
        ("ftp://host/repo", ""),
        ("https://github.com/", ""),
        ("ssh://git@localhost/r.git", ""),
    ],
)
def test_web_url_for(remote: str, web: str) -> None:
    assert web_url_for(remote) == web


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("web", "path", "start", "end", "link"),
    [
        (
            "https://github.com/o/r",
            "src/app.py",
            10,
            42,
            f"https://github.com/o/r/blob/{SHA}/src/app.py#L10-L42",
        ),
        ("https://github.com/o/r", "a.py", 7, 7, f"https://github.com/o/r/blob/{SHA}/a.py#L7"),
        (
            "https://gitlab.com/g/sub/r",
            "src/app.py",
            10,
            42,
            f"https://gitlab.com/g/sub/r/-/blob/{SHA}/src/app.py#L10-42",
        ),
        (
            "https://gitlab.example.com/t/r",
            "a.py",
            3,
            3,
            f"https://gitlab.example.com/t/r/-/blob/{SHA}/a.py#L3",
        ),
        (
            "https://bitbucket.org/o/r",
            "src/app.py",
            10,
            42,
            f"https://bitbucket.org/o/r/src/{SHA}/src/app.py#lines-10:42",
        ),
        (
            "https://bitbucket.org/o/r",
            "a.py",
            5,
            5,
            f"https://bitbucket.org/o/r/src/{SHA}/a.py#lines-5",
        ),
        (
            "https://git.corp.example/t/r/",
            "docs/read me#1.md",
            1,
            2,
            f"https://git.corp.example/t/r/blob/{SHA}/docs/read%20me%231.md#L1-L2",
        ),
        (
            "https://github.com/o/r",
            "ünï/kód.py",
            2,
            1,
            f"https://github.com/o/r/blob/{SHA}/%C3%BCn%C3%AF/k%C3%B3d.py#L2",
        ),
    ],
)
def test_permalink(web: str, path: str, start: int, end: int, link: str) -> None:
    assert permalink(web, SHA, path, start, end) == link


@pytest.mark.parametrize(("web", "commit"), [("", SHA), ("https://github.com/o/r", "")])
def test_permalink_is_empty_for_local_repositories(web: str, commit: str) -> None:
    assert permalink(web, commit, "a.py", 1, 2) == ""


def test_redact_strips_userinfo_and_secrets() -> None:
    text = (
        "fatal: unable to access 'https://bob:hunter2@github.com/o/r.git/': 403; "
        "token ghp_SECRET and ghp_SECRET again, ssh://git@host/x"
    )
    cleaned = redact(text, ["ghp_SECRET", ""])
    assert "hunter2" not in cleaned and "bob" not in cleaned
    assert "ghp_SECRET" not in cleaned
    assert "https://github.com/o/r.git/" in cleaned
    assert cleaned.count("***") == 2
    assert redact("see https://u:p@ss@host.example/x and me@mail.example") == (
        "see https://host.example/x and me@mail.example"
    )


def test_parse_remote_moves_credentials_out_of_the_url() -> None:
    remote = parse_remote("https://bob:p%40ss@github.com:443/o/r.git")
    assert remote.url == "https://github.com:443/o/r.git"
    assert (remote.username, remote.password) == ("bob", "p@ss")
    assert remote.is_github
    ssh = parse_remote("ssh://git@gitlab.com/g/r.git")
    assert ssh.url == "ssh://git@gitlab.com/g/r.git" and ssh.password == ""
    scp = parse_remote("git@github.com:o/r.git")
    assert (scp.scheme, scp.host, scp.path) == ("scp", "github.com", "o/r.git")
    assert parse_remote("git+ssh://git@h.example/r.git").scheme == "ssh"


@pytest.mark.parametrize(
    ("location", "problem"),
    [
        ("not a url", "whitespace"),
        ("https://exa mple.com/x", "whitespace"),
        ("ftp://host/repo", "Unsupported URL scheme 'ftp'"),
        ("https://", "no valid host"),
        ("https://github.com", "does not name a repository"),
        ("https://github.com:99999/o/r", "invalid port"),
        ("https://-bad-.example/o/r", "no valid host"),
        ("file://server/share/r.git", "not a valid file:// URL"),
        ("https://github.com/o/r?x=1", "query"),
        ("plainword", "not a git URL"),
    ],
)
def test_parse_remote_rejects_bad_urls_with_one_line(location: str, problem: str) -> None:
    with pytest.raises(SourceError) as caught:
        parse_remote(location)
    message = caught.value.user_message
    assert problem in message
    assert "\n" not in message


def test_parse_remote_error_never_shows_a_password() -> None:
    with pytest.raises(SourceError) as caught:
        parse_remote("ftp://bob:hunter2@host/repo")
    assert "hunter2" not in caught.value.user_message
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("https://github.com/o/r.git", True),
        ("git@github.com:o/r.git", True),
        ("file:///srv/r.git", True),
        ("/srv/r", False),
        ("./r", False),
        ("r", False),
        ("sub/dir:with-colon", False),
    ],
)
def test_is_url(location: str, expected: bool) -> None:
    assert is_url(location) is expected
