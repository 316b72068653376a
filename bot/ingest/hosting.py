"""Repository locations: parse git URLs, carry their credentials, build web links.

A location is a git URL (https://, http://, ssh://, git://, file://), an
scp-like address (`git@host:org/repo.git`) or a local path. URLs are
validated here so a typo fails with a sentence instead of a git traceback,
and credentials are split off so they never reach argv, `.git/config` or a log.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from bot.errors import SourceError

SCHEMES = frozenset({"https", "http", "ssh", "git", "file"})
_SCHEME_ALIASES = {"git+ssh": "ssh", "ssh+git": "ssh"}
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s]*@")  # up to the last @
# git's rule: a colon before any slash makes `host:path` an scp-like address.
_SCP = re.compile(
    r"^(?:(?P<user>[A-Za-z0-9._~-]+)@)?(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\])"
    r":(?P<path>(?!//)[^\s]+)$"
)
_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9-]+)*\.?$")
_IPV6 = re.compile(r"^[0-9A-Fa-f:.]+$")


@dataclass(frozen=True, slots=True)
class RemoteURL:
    """A validated git remote. `url` carries no password and is safe to store and log."""

    url: str
    scheme: str  # https, http, ssh, git, file or "scp" for git@host:path
    host: str  # lower-case, "" for file://
    port: int | None
    path: str  # as written after the host ("/org/repo.git", or "org/repo.git" for scp)
    username: str = ""  # http(s) userinfo, handed to git out of band
    password: str = ""

    @property
    def is_github(self) -> bool:
        return self.host in {"github.com", "www.github.com"}


def is_url(location: str) -> bool:
    """True when `location` is written as a URL or scp-like address rather than a path."""
    return bool(_URL.match(location)) or bool(_SCP.match(location.strip()))


def parse_remote(location: str) -> RemoteURL:
    """Validate a git URL; SourceError with a one-line reason if it cannot be one."""
    text = location.strip()
    if any(c.isspace() or ord(c) < 32 for c in text):
        raise SourceError(f"The repository URL {redact(text)!r} contains whitespace.")
    if not _URL.match(text):
        scp = _SCP.match(text)
        if scp is None:
            raise SourceError(f"{redact(text)!r} is not a git URL.")
        return RemoteURL(
            url=text, scheme="scp", host=scp["host"].lower(), port=None, path=scp["path"]
        )
    return _parse_url(text)


def _parse_url(text: str) -> RemoteURL:
    shown = redact(text)
    parts = urlsplit(text)
    scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in SCHEMES:
        raise SourceError(
            f"Unsupported URL scheme {parts.scheme!r} in {shown}: "
            "use https://, ssh://, git@host:path or file://."
        )
    if parts.query or parts.fragment:
        raise SourceError(f"The repository URL {shown} must not have a query or fragment.")
    if scheme == "file":
        if not parts.path or parts.netloc not in ("", "localhost"):
            raise SourceError(f"{shown} is not a valid file:// URL (use file:///absolute/path).")
        return RemoteURL(f"file://{parts.path}", "file", "", None, parts.path)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        raise SourceError(f"The repository URL {shown} has an invalid port.") from None
    if not _valid_host(host):
        raise SourceError(f"The repository URL {shown} has no valid host name.")
    if parts.path.strip("/") == "":
        raise SourceError(f"The repository URL {shown} does not name a repository.")
    username, password = unquote(parts.username or ""), unquote(parts.password or "")
    keep_user = scheme == "ssh" and username  # ssh needs its login name; never a password
    netloc = _netloc(host, port, username if keep_user else "")
    return RemoteURL(
        url=f"{scheme}://{netloc}{parts.path}",
        scheme=scheme,
        host=host,
        port=port,
        path=parts.path,
        username="" if keep_user else username,
        password=password,
    )


def _valid_host(host: str) -> bool:
    if ":" in host:
        return bool(_IPV6.match(host))
    return bool(host) and len(host) <= 253 and bool(_HOST.match(host))


def _netloc(host: str, port: int | None, user: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    if port is not None:
        shown += f":{port}"
    return f"{quote(user, safe='')}@{shown}" if user else shown


def auth_env(remote: RemoteURL, token: str | None) -> tuple[dict[str, str], tuple[str, ...]]:
    """Extra environment that authenticates `remote`, and the secrets to scrub from output.

    URL credentials (`https://user:pass@host/...`) apply to that host only;
    a GitHub token only to github.com. Both become an HTTP Authorization
    header set through GIT_CONFIG_COUNT, which git reads from the environment
    and never writes to `.git/config`.
    """
    if remote.scheme not in ("http", "https"):
        return {}, ()
    if remote.password:
        user, secret = remote.username, remote.password
    elif token and remote.is_github and remote.scheme == "https":
        user, secret = "x-access-token", token
    else:
        return {}, ()
    basic = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
    host = f"[{remote.host}]" if ":" in remote.host else remote.host
    if remote.port is not None:
        host += f":{remote.port}"
    env = config_env(f"http.{remote.scheme}://{host}/.extraheader", f"AUTHORIZATION: basic {basic}")
    secrets = tuple(s for s in (secret, basic, token or "") if s)
    return env, secrets


def config_env(key: str, value: str) -> dict[str, str]:
    """Git config `key = value` as environment (GIT_CONFIG_COUNT), after any already set there:
    git reads it as command-line config and never writes it to a repository's `.git/config`."""
    index = int(os.environ.get("GIT_CONFIG_COUNT", "0") or "0")
    return {
        "GIT_CONFIG_COUNT": str(index + 1),
        f"GIT_CONFIG_KEY_{index}": key,
        f"GIT_CONFIG_VALUE_{index}": value,
    }


def web_url_for(remote: str) -> str:
    """`https://host/org/repo` for a hosted remote; "" for file://, paths and bad input."""
    try:
        parsed = parse_remote(remote)
    except SourceError:
        return ""
    if parsed.scheme == "file" or not parsed.host or parsed.host == "localhost":
        return ""
    path = parsed.path.strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if not path or any(seg in ("", ".", "..") for seg in path.split("/")):
        return ""
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    if parsed.scheme in ("http", "https"):
        scheme = parsed.scheme
        if parsed.port is not None:
            host += f":{parsed.port}"  # a self-hosted web UI usually shares its port
    else:
        scheme = "https"  # ssh/git ports belong to the git daemon, not the web UI
    if parsed.host == "www.github.com":
        host = "github.com"
    return f"{scheme}://{host}/{path}"


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """Remove userinfo from every URL in `text` and replace each secret with `***`."""
    cleaned = _USERINFO.sub(r"\1", text)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        cleaned = cleaned.replace(secret, "***")
    return cleaned
