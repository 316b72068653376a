"""Harvest look-alikes (text that is no secret but reads like one) from public repositories.

    PYTHONPATH=. .venv/bin/python bench/secrets_corpus/harvest.py /work/.mirror \\
        > bench/cases/secrets_lookalikes.jsonl

Reads the committed files at HEAD of each repository in REPOS (git mirrors
brought by `fetch`), keeps lines of the categories below (each line once,
a few per category and repository), and prints one JSON object a line with
the line, the two lines before it (so YAML keeps its nesting) and where it
came from. The output is the look-alike half of the corpus; the repositories
are ordinary projects, none of them reserved for another evaluation here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

REPOS = (
    "heartcombo/devise",
    "goharbor/harbor-helm",
    "spring-projects/spring-petclinic",
    "nextcloud/docker",
    "authelia/authelia",
    "fastapi/full-stack-fastapi-template",
    "mattermost/docker",
    "docker/build-push-action",
    "pi-hole/docker-pi-hole",
    "discourse/discourse_docker",
)
_SECRETISH = r"(?i:pass(?:word|wd)?|secret|token|api[_-]?key|credential|auth)"
CATEGORIES: dict[str, re.Pattern[str]] = {
    "secrets_reference": re.compile(r"\$\{\{\s*secrets\.\w+\s*\}\}"),
    "pinned_action_sha": re.compile(r"uses:\s*\S+@[0-9a-f]{40}\b"),
    "environment_read": re.compile(
        r"(?:getenv\(|os\.environ|process\.env\.|ENV\[|System\.getenv|os\.Getenv|env\.)[^\n]*"
        + _SECRETISH
    ),
    "template_reference": re.compile(
        r"\{\{-?\s*[^}]*" + _SECRETISH + r"[^}]*\}\}|\$\{[A-Z_]*" + _SECRETISH + r"[A-Z_]*\}"
    ),
    "secret_by_reference": re.compile(
        r"secretKeyRef|existingSecret\w*:|secretName:|password_file|"
        r"(?i:pass\w*|secret\w*|token\w*|key)_FILE\b"
    ),
    "password_hash": re.compile(r"\$argon2id?\$|\$pbkdf2|\$2[aby]\$\d\d\$|\$6\$[./\w]{8,}\$"),
    "checksum": re.compile(r"(?:sha256|sha512|sha1)[:= ]+[0-9a-f]{40,}|[0-9a-f]{64}"),
    "uuid": re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    "empty_or_none": re.compile(
        r"(?i)\w*(?:password|secret|token|api_?key)\w*['\"]?\s*(?:=|:|=>)\s*(?:\"\"|''|None|nil|null|~)?\s*[,;]?\s*$"
    ),
    "form_field": re.compile(r"password_field|type=\"password\"|:current_password|f\.label :pass"),
    "route_or_helper": re.compile(r"\w*_password_\w*(?:path|url)\b|passwords#\w+|/passwords?/"),
    "header_name": re.compile(r"(?i)X-[A-Za-z-]*(?:Token|Key|Auth)[A-Za-z-]*"),
    "placeholder": re.compile(
        r"(?i)changethis|changeme|<[\w -]*(?:password|secret|token|key)[\w -]*>"
        r"|your[-_ ](?:password|secret|token|api)"
    ),
    "interpolation": re.compile(r"#\{[^}]*" + _SECRETISH + r"[^}]*\}|\$\([^)]*" + _SECRETISH),
}
PER_REPO = 4  # lines per category and repository
_SKIP = re.compile(r"\.(?:lock|svg|png|min\.js|map)$|(?:^|/)(?:vendor|node_modules)/")


def harvest(mirrors: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for repo in REPOS:
        taken: Counter[str] = Counter()
        for commit, path, text in files_at_head(mirrors, repo, lambda path: not _SKIP.search(path)):
            lines = text.split("\n")
            for number, line in enumerate(lines):
                case = _case(line, taken, seen)
                if case is None:
                    continue
                category, key = case
                taken[category] += 1
                seen.add(key)
                out.append(
                    {
                        "category": category,
                        "source": f"{repo}@{commit[:12]}:{path}:{number + 1}",
                        "path": path,
                        "before": lines[max(0, number - 2) : number],
                        "line": line,
                    }
                )
    return out


def _case(line: str, taken: Counter[str], seen: set[str]) -> tuple[str, str] | None:
    stripped = line.strip()
    if not 8 <= len(stripped) <= 200:
        return None
    key = re.sub(r"\s+", " ", stripped)
    if key in seen:
        return None
    for category, pattern in CATEGORIES.items():
        if taken[category] < PER_REPO and pattern.search(line):
            if category == "checksum" and _NAMED_SECRET.search(line):
                return None  # `secret_key_base = '<hex>'` is a secret of that shape, not a digest
            return category, key
    return None


_NAMED_SECRET = re.compile(_SECRETISH + r"\w*['\"]?\s*(?:=|:)")


def files_at_head(
    mirrors: Path, repo: str, wanted: Callable[[str], bool]
) -> Iterator[tuple[str, str, str]]:
    """(commit, path, text) of each file at the HEAD of `repo`'s mirror whose path is wanted."""
    git = ["git", f"--git-dir={mirrors / repo.replace('/', '+') / 'repo'}"]
    commit = _run([*git, "rev-parse", "HEAD"]).strip()
    for path in _run([*git, "ls-tree", "-r", "--name-only", "HEAD"]).splitlines():
        if wanted(path):
            yield commit, path, _run([*git, "show", f"HEAD:{path}"], check=False)


def _run(command: list[str], *, check: bool = True) -> str:
    done = subprocess.run(command, capture_output=True, check=check)
    return done.stdout.decode("utf-8", "replace")


def main() -> None:
    for case in harvest(Path(sys.argv[1])):
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
