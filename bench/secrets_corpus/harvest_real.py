"""Harvest the corpus's second dev part: real INI, properties, shell and URL lines.

    PYTHONPATH=. .venv/bin/python bench/secrets_corpus/harvest_real.py /work/.mirror \\
        > bench/cases/secrets_real_lines.jsonl

Reads the committed files at HEAD of each repository in REPOS (git mirrors brought by
`fetch`; ordinary projects, none of them a scanner, none used by an earlier evaluation) and
keeps the lines of four formats whose key names a secret: INI `name = value` (config files
and the credential-file examples in documentation), Java `.properties`, shell (`export`,
assignments, `--flag=value`) and URLs that carry a credential (user:password, webhook
paths, key or token query parameters).

Each line becomes one of two kinds of case:
- a SECRET TEMPLATE when its value reads like a credential (or a documented run of `x`
  standing for one): the value is replaced by `{VALUE}` and its shape written as a
  `formats.txt` spec (alphabet and length of each segment, a short alphabetic prefix kept),
  so `plant_real.py` draws a fresh random value of the same shape; for a URL each random
  part is replaced on its own and the scheme, host and user name stay;
- a LOOK-ALIKE when its value is a reference, a placeholder or a word (`${DB_PASSWORD}`,
  `YOUR_ACCESS_KEY`, `*** ENCRYPTED ***`, `"Your API Token"`): kept as written.
Anything between (a short random-looking value) is left out. No harvested value is kept.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from bench.secrets_corpus.harvest import files_at_head

REPOS = (
    "certbot/certbot",
    "rclone/rclone",
    "acmesh-official/acme.sh",
    "mailcow/mailcow-dockerized",
    "jitsi/docker-jitsi-meet",
    "xuxueli/xxl-job",
    "alibaba/nacos",
    "caronc/apprise",
    "alibaba/canal",
    "apache/rocketmq",
    "apache/kafka",
    "s3tools/s3cmd",
    "Supervisor/supervisor",
)
# A third dev part (issue 28, fourth pass), harvested the same way after the second part's
# misses were fixed, to see whether the fixes reach repositories no one had read:
#   harvest_real.py /work/.mirror three > bench/cases/secrets_real_lines_3.jsonl
REPOS_THREE = (
    "containrrr/shoutrrr",
    "apolloconfig/apollo",
    "pimutils/vdirsyncer",
    "apache/dolphinscheduler",
)
_WORD = r"(?:pass(?:word|wd|phrase)?|secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key"
_WORD += r"|credentials?|auth|key|pwd|signing[_.-]?key|webhook)"
SECRET_NAME = re.compile(_WORD, re.IGNORECASE)
INI_LINE = re.compile(
    r"^(?P<lead>\s*)(?P<name>[A-Za-z][\w.-]*)(?P<eq>\s*=\s*)(?P<value>(?:\S.*?)?)\s*$"
)
PROPERTIES_LINE = re.compile(
    r"^(?P<lead>\s*)(?P<name>[A-Za-z][\w.-]*)(?P<eq>\s*[=:]\s*)(?P<value>(?:\S.*?)?)\s*$"
)
SHELL_LINE = re.compile(
    r"^(?P<lead>\s*#?\s*(?:export\s+)?)(?P<name>[A-Za-z_][\w]*)(?P<eq>=)(?P<value>(?:\S.*?)?)\s*$"
)
FLAG = re.compile(
    r"(?P<lead>--)(?P<name>[a-z][\w-]*)(?P<eq>[= ])(?P<value>[^\s'\"]+|\"[^\"]*\"|'[^']*')"
)
URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s'\"<>`)\]]+")
_URL_SECRET = re.compile(
    r"://[^/\s:@]+:[^/\s@]+@|/(?:hooks?|webhooks?|services|robot|bot|send|hook)/|[?&](?:key|token|access_token|secret|sig|apikey|api_key)="
)
INI_FILES = re.compile(
    r"\.(?:ini|cfg|conf|s3cfg|pypirc|ini\.tpl)$|(?:^|/)docs/.*\.md$|certbot_dns_\w+/__init__\.py$"
)
PROPERTIES_FILES = re.compile(r"\.properties$")
SHELL_FILES = re.compile(r"\.sh$|(?:^|/)env\.example$|(?:^|/)(?:generate_config|gen-passwords)\b")
URL_FILES = re.compile(r"\.(?:md|rst|py|sh|conf|ini|properties|ya?ml|toml|txt)$")
_SKIP = re.compile(r"(?:^|/)(?:vendor|node_modules|test|tests|testdata)/|\.min\.js$")
PER_REPO = 60  # cases per kind, class and repository

_REFERENCE = re.compile(r"[$%]\{|\$\(|\{\{|^\$|<[^>]*>|\*\*\*|\.\.\.|^\s*$|^['\"]{2}$")
_PLACEHOLDER_WORD = re.compile(
    r"(?i)^['\"]?(?:[a-z]+(?:[_ -][a-z]+)*|[A-Z0-9]+(?:_[A-Z0-9]+)+|x{1,11}|y{1,11})['\"]?$"
)
_HOSTISH = re.compile(r"^(?:localhost|[\w-]+(?:\.[\w-]+)+)$")
_XRUN = re.compile(r"^(?P<prefix>[A-Za-z0-9]{0,8}?)(?P<run>x{12,}|X{12,})$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
ALPHABETS = (  # narrowest first: the spec takes the first that covers a segment
    ("DIG", set("0123456789")),
    ("HEX", set("0123456789abcdef")),
    ("HEXU", set("0123456789ABCDEF")),
    ("LOWNUM", set("abcdefghijklmnopqrstuvwxyz0123456789")),
    ("UPNUM", set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")),
    ("B62", set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
    ("B64U", set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")),
    ("B64", set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")),
    ("PW", set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#%*-_@^")),
)


def spec_of(value: str) -> str | None:
    """The shape of a credential-looking value as a formats.txt spec, or None."""
    if _UUID.match(value):
        return "{UUID}"
    xrun = _XRUN.match(value)
    if xrun:
        run = xrun["run"]
        return xrun["prefix"] + (
            f"{{B62:{len(run)}}}" if run[0] == "x" else f"{{UPNUM:{len(run)}}}"
        )
    if len(value) < 12 or " " in value or not _random_looking(value):
        return None
    body, padding = value.rstrip("="), "=" * (len(value) - len(value.rstrip("=")))
    segments = re.split(r"([-_.:])", body) if re.search(r"[0-9A-Za-z]{4}[-.:]", body) else [body]
    out = []
    for n, segment in enumerate(segments):
        if n % 2 == 1 or not segment:
            out.append(segment)
        elif n == 0 and len(segments) > 1 and segment.isalpha() and len(segment) <= 5:
            out.append(segment)  # a prefix such as `sk`, `SEC`, `AKAP`
        else:
            cls = next((name for name, chars in ALPHABETS if set(segment) <= chars), None)
            if cls is None:
                return None
            out.append(f"{{{cls}:{len(segment)}}}")
    return "".join(out) + padding


def _random_looking(value: str) -> bool:
    kinds = sum(bool(re.search(p, value)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return kinds >= 2 and not _PLACEHOLDER_WORD.match(value) and not _HOSTISH.match(value)


# The documented shape of the credential a slot's name asks for (AWS-style key pairs, which
# S3-compatible providers copy, bearer tokens, passwords, hex API keys), for the harvested
# lines whose value is a placeholder: the line is real, the value drawn in that shape.
NAME_SHAPES = (
    (re.compile(r"(?i)secret[_.-]?access[_.-]?key|secret[_.-]?key"), "{B64:40}"),
    (re.compile(r"(?i)access[_.-]?key(?:[_.-]?id)?|key[_.-]?id"), "{UPNUM:20}"),
    (re.compile(r"(?i)pass(?:word|wd|phrase)?|pwd|pw$"), "{PW:20}"),
    (re.compile(r"(?i)token"), "{B62:40}"),
    (re.compile(r"(?i)secret|signing"), "{B64U:32}"),
    (re.compile(r"(?i)key|auth|credential|webhook"), "{HEX:32}"),
)


def shape_for_name(name: str) -> str:
    return next(spec for pattern, spec in NAME_SHAPES if pattern.search(name))


def _slot(value: str) -> bool:
    """A placeholder standing where the credential goes (not a reference to one)."""
    if value == "":
        return True
    return not _REFERENCE.search(value.replace("<", "").replace(">", "")) and (
        bool(_PLACEHOLDER_WORD.match(value))
        or value.lower().startswith("your")
        or bool(re.fullmatch(r"<[\w -]+>", value))
    )


_NAMED_PLACEHOLDER = re.compile(
    r"(?i)^(?:your\b.*|x+|y+|change_?me|true|false|none|null|[a-z]+(?:[_-][a-z]+)+)$"
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"
)


def lookalike_value(value: str) -> bool:
    """A reference, a placeholder that says so, or words: not a credential. A literal word
    under a password's name (`kerberos`, `abcdefgh`) is a weak password, not a look-alike."""
    bare = value.strip("'\"")
    if _REFERENCE.search(bare):
        return True
    if " " in bare:
        return not re.search(r"[A-Za-z0-9+/]{16,}", bare)
    return _NAMED_PLACEHOLDER.match(bare) is not None


def url_template(url: str) -> tuple[str, list[str]] | None:
    """The URL with each random part replaced by `{Pn}` and the parts' specs, or None."""
    if not _URL_SECRET.search(url) or "utm_" in url:
        return None
    scheme, _, rest = url.partition("://")
    specs: list[str] = []

    def part(match: re.Match[str]) -> str:
        spec = spec_of(match.group(0))
        if spec is None:
            return match.group(0)
        specs.append(spec)
        return f"{{P{len(specs) - 1}}}"

    auth, at, tail = rest.rpartition("@")
    if at and ":" in auth:
        user, _, password = auth.partition(":")
        rest = user + ":" + re.sub(r"^.+$", part, password) + "@" + tail
        # a documented password such as `password` is a placeholder, not a shape
    rest = re.sub(r"(?<=[/=])[A-Za-z0-9_\-+.]{12,}(?=[/?&#]|$)", part, rest)
    return (scheme + "://" + rest, specs) if specs else None


# Service URLs documented with named slots (`discord://webhook_id/webhook_token`, a table
# of them in a README): each slot naming a secret is drawn in its name's shape, the others
# get fixed ordinary values (so only the secret parts are scored).
_DOC_URL = re.compile(r"\b[a-z][a-z0-9]{1,15}s?://[\w@:/.#{}+-]*[A-Za-z]")
_SLOT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_FILLERS = (
    (re.compile(r"(?i)host"), "notify.example.org"),
    (re.compile(r"(?i)port"), "8443"),
    (re.compile(r"(?i)id$|serial"), "4815162342"),
    (re.compile(r"(?i)user|handle|email|from|to"), "ops"),
)
_SLOT_SECRET = re.compile(r"(?i)token|key|pw$|pass|secret|apikey|webhook_?token")


def documented_url(url: str) -> tuple[str, list[str]] | None:
    scheme, _, rest = url.partition("://")
    if not rest or ("." in rest.split("/")[0] and "@" not in rest):
        return None  # an ordinary address, not a slot template
    specs: list[str] = []

    def slot(match: re.Match[str]) -> str:
        word = match.group(0)
        if _SLOT_SECRET.search(word) and not re.search(r"(?i)id$|name", word):
            specs.append(shape_for_name(word))
            return f"{{P{len(specs) - 1}}}"
        return next((fill for pattern, fill in _FILLERS if pattern.search(word)), word.lower())

    template = _SLOT.sub(slot, rest)
    return (scheme + "://" + template, specs) if specs else None


def _classes(path: str) -> list[str]:
    found = []
    if INI_FILES.search(path):
        found.append("ini")
    if PROPERTIES_FILES.search(path):
        found.append("properties")
    if SHELL_FILES.search(path):
        found.append("shell")
    if URL_FILES.search(path):
        found.append("url")
    return found


_LAST_WORDS = {
    "password", "pass", "passwd", "pwd", "passphrase", "secret", "token", "key", "apikey",
    "secretkey", "accesskey", "credentials", "credential",
}  # fmt: skip
_NOT_SECRET = re.compile(
    r"(?i)file|path|url|name|public|type|mode|enable|length|size|header|expir|ttl|policy|store"
)


def names_secret(name: str) -> bool:
    """The name's last word says its value is the secret (`db.password`, `CF_Token`,
    `accessToken`), not something about one (`smtp.auth` is a flag, `token.expire` a time)."""
    words = re.split(r"[._-]|(?<=[a-z])(?=[A-Z])", name)
    return words[-1].lower() in _LAST_WORDS and not _NOT_SECRET.search(name)


def cases_in(text: str, path: str, cls: str) -> list[dict[str, object]]:
    lines = text.split("\n")
    out: list[dict[str, object]] = []
    for number, line in enumerate(lines):
        if len(line) > 300:
            continue
        for case in _line_cases(line, cls):
            case.update(line_number=number + 1, before=lines[max(0, number - 3) : number])
            out.append(case)
    return out


def _line_cases(line: str, cls: str) -> list[dict[str, object]]:
    if cls == "url" and line.startswith("| ["):  # a table of documented service URLs
        cell = line.rsplit("|", 1)[-1]
        out = []
        for match in _DOC_URL.finditer(cell):
            made = documented_url(match.group(0))
            if made is not None:
                out.append({"kind": "secret", "template": f"NOTIFY_URL={made[0]}", "specs": made[1],
                            "name": "NOTIFY_URL", "shaped_by": "name"})  # fmt: skip
        return out[:1]  # one form a service
    if cls == "url":
        out = []
        for match in URL.finditer(line):
            made = url_template(match.group(0))
            if made is not None:
                template, specs = made
                line_t = line[: match.start()] + template + line[match.end() :]
                out.append({"kind": "secret", "template": line_t, "specs": specs, "name": ""})
        return out
    pattern = {"ini": INI_LINE, "properties": PROPERTIES_LINE, "shell": SHELL_LINE}[cls]
    matches = [pattern.match(line)] + (list(FLAG.finditer(line)) if cls == "shell" else [])
    out = []
    for match in filter(None, matches):
        if not names_secret(match["name"]):
            continue
        value = match["value"]
        quote = (
            value[0] if value[:1] in "'\"" and value[-1:] == value[:1] and len(value) > 1 else ""
        )
        bare = value[1:-1] if quote else value
        spec, shaped = spec_of(bare), "value"
        if spec is None and _slot(bare):
            spec, shaped = shape_for_name(match["name"]), "name"
        if spec is not None:
            start, end = match.start("value") + len(quote), match.end("value") - len(quote)
            template = line[:start] + "{P0}" + line[end:]
            out.append({"kind": "secret", "template": template, "specs": [spec],
                        "name": match["name"], "shaped_by": shaped})  # fmt: skip
        if lookalike_value(value) and value.strip("'\""):
            out.append({"kind": "lookalike", "template": line, "specs": [], "name": match["name"]})
    return out


def _harvested(path: str) -> bool:
    return bool(_classes(path)) and not _SKIP.search(path)


def harvest(mirrors: Path, repos: tuple[str, ...] = REPOS) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for repo in repos:
        taken: Counter[tuple[str, str]] = Counter()
        for commit, path, text in files_at_head(mirrors, repo, _harvested):
            for cls in _classes(path):
                for case in cases_in(text, path, cls):
                    key = re.sub(r"\s+", " ", str(case["template"])).strip()
                    if key in seen or taken[(str(case["kind"]), cls)] >= PER_REPO:
                        continue
                    seen.add(key)
                    taken[(str(case["kind"]), cls)] += 1
                    line_number = case.pop("line_number")
                    out.append(
                        {"class": cls, "source": f"{repo}@{commit[:12]}:{path}:{line_number}",
                         "path": path, **case}
                    )  # fmt: skip
    return out


def main() -> None:
    repos = REPOS_THREE if sys.argv[2:3] == ["three"] else REPOS
    for case in harvest(Path(sys.argv[1]), repos):
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
