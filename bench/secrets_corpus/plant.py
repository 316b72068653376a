"""The corpus: each generated value planted in one realistic file, and the look-alikes.

A context writes one file around a value under the name people give it (an
assignment in each format we index, a flag, a URL, a table row, a comment, a
docstring, an issue template, a documentation example). Each file also holds a
canary line of ordinary text: when the canary is missing from the index, the
whole file was lost, not only the secret. `corpus()` is deterministic.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.secrets_corpus.generate import Format, formats, value
from bot.code.languages import language_for

SEED = "codecite-secrets-round-three"
VALUES_PER_KIND = 2
LOOKALIKES = Path(__file__).resolve().parents[1] / "cases" / "secrets_lookalikes.jsonl"


@dataclass(frozen=True, slots=True)
class Planted:
    id: str
    fmt: Format
    value: str
    secrets: tuple[str, ...]
    context: str
    cls: str  # the context's class: code, config, shell, cli, prose, example, ...
    path: str
    text: str
    canary: str


@dataclass(frozen=True, slots=True)
class Lookalike:
    id: str
    category: str
    source: str
    path: str
    text: str
    probe: str  # the line that must reach the index unchanged


Render = Callable[[str, str, str, str], tuple[str, str]]  # name, value, label, canary


def _camel(name: str) -> str:
    first, *rest = name.lower().split("_")
    return first + "".join(w.capitalize() for w in rest)


def _field(fmt_name: str) -> str:
    return fmt_name.lower()


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def _multiline(value: str) -> bool:
    return "\n" in value


# --- contexts: (class, formats allowed, render) ------------------------------------------
def _python(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    body = f'{n} = """{v}"""' if _multiline(v) else f'{n} = "{v}"'
    return "app/settings.py", _lines('"""Settings."""', "import os", "", body, f"# {c}")


def _python_kwarg(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    arg = n.lower().split("_", 1)[-1]
    return "app/clients.py", _lines(
        "from acme import Client", "", f'client = Client({arg}="{v}", timeout=30)', f"# {c}"
    )


def _javascript(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "src/config.js", _lines(
        "// Service configuration", f'const {_camel(n)} = "{v}";', f"export const note = '{c}';"
    )


def _js_object(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "src/client.ts", _lines(
        "export const options = {",
        "  region: 'eu-west-1',",
        f"  {_camel(n.split('_', 1)[-1])}: '{v}',",
        "};",
        f"// {c}",
    )


def _go(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "internal/config/config.go", _lines(
        "package config", "", f'const {_camel(n)} = "{v}"', "", f"// {c}"
    )


def _go_struct(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    field = "".join(w.capitalize() for w in n.lower().split("_")[1:]) or "Key"
    return "cmd/server/main.go", _lines(
        "package main",
        "",
        "func defaults() Config {",
        f'\treturn Config{{Region: "eu-west-1", {field}: "{v}"}}',
        "}",
        f"// {c}",
    )


def _ruby(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "config/initializers/service.rb", _lines(
        "Rails.application.configure do", f"  config.x.{_field(n)} = '{v}'", "end", f"# {c}"
    )


def _env(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "deploy/production.env", _lines("# production", f"{n}={v}", "LOG_LEVEL=info", f"# {c}")


def _compose(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docker-compose.yml", _lines(
        "services:",
        "  api:",
        "    image: acme/api:1.4",
        "    environment:",
        f"      - {n}={v}",
        "      - LOG_LEVEL=info",
        f"# {c}",
    )


def _yaml(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    key = _field(n)
    if _multiline(v):
        block = "\n".join("    " + line for line in v.split("\n"))
        return "config/app.yaml", _lines("service:", f"  {key}: |", block, f"# {c}")
    return "config/app.yaml", _lines("service:", "  region: eu-west-1", f"  {key}: {v}", f"# {c}")


def _k8s_secret(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "k8s/secret.yaml", _lines(
        "apiVersion: v1",
        "kind: Secret",
        "metadata:",
        "  name: api-credentials",
        "stringData:",
        f'  {n}: "{v}"',
        f"# {c}",
    )


def _workflow(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return ".github/workflows/deploy.yml", _lines(
        "name: deploy",
        "on: push",
        "jobs:",
        "  deploy:",
        "    runs-on: ubuntu-latest",
        "    env:",
        f"      {n}: {v}",
        "    steps:",
        f"      - run: echo '{c}'",
    )


def _toml(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    if _multiline(v):
        return "config.toml", _lines("[service]", f"{_field(n)} = '''", v, "'''", f"# {c}")
    return "config.toml", _lines(
        "[service]", 'region = "eu-west-1"', f'{_field(n)} = "{v}"', f"# {c}"
    )


def _terraform(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "infra/main.tf", _lines(
        'provider "acme" {', '  region = "eu-west-1"', f'  {_field(n)} = "{v}"', "}", f"# {c}"
    )


def _ini(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "settings.ini", _lines("[service]", "region = eu-west-1", f"{_field(n)} = {v}", f"; {c}")


def _json(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    doc = {"service": {"region": "eu-west-1", _camel(n): v}, "note": c}
    return "config/appsettings.json", json.dumps(doc, indent=2) + "\n"


def _properties(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    key = n.lower().replace("_", ".")
    return "src/main/resources/application.properties", _lines(
        "server.port=8080", f"{key}={v}", f"# {c}"
    )


def _dockerfile(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "Dockerfile", _lines("FROM python:3.12-slim", f"ENV {n}={v}", f"# {c}", 'CMD ["app"]')


def _dockerfile_space(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docker/Dockerfile", _lines("FROM node:22", f"ENV {n} {v}", f"# {c}", 'CMD ["node"]')


def _shell(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    quoted = f"'{v}'" if any(ch in v for ch in " ;&$|!#*()<>") else f'"{v}"'
    return "scripts/deploy.sh", _lines(
        "#!/usr/bin/env bash", "set -euo pipefail", f"export {n}={quoted}", f"echo '{c}'"
    )


def _cli_flag(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    flag = n.lower().replace("_", "-")
    return "scripts/run.sh", _lines(
        "#!/bin/sh", f"acme-agent --{flag}={v} --region eu-west-1", f"# {c}"
    )


def _cli_header(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "scripts/check.sh", _lines(
        "#!/bin/sh",
        f'curl -s -H "Authorization: Bearer {v}" https://api.acme.io/v1/status',
        f"# {c}",
    )


def _url(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "config/services.yaml", _lines("endpoints:", f"  {_field(n)}: {v}", f"# {c}")


def _url_code(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "app/db.py", _lines("import os", "", f'{n} = os.environ.get("{n}", "{v}")', f"# {c}")


def _md_table(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docs/environments.md", _lines(
        "# Environments",
        "",
        "| Service | Variable | Value |",
        "|---|---|---|",
        f"| {label} | `{n}` | `{v}` |",
        "| region | `AWS_REGION` | `eu-west-1` |",
        "",
        c,
    )


def _readme(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "README.md", _lines(
        "# Acme API", "", f"For local testing use the staging {label} {v} (rotated monthly).", "", c
    )


def _comment(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "app/jobs.py", _lines(
        f"# {label} for the staging account: {v}", "def run():", f'    return "{c}"'
    )


def _docstring(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "app/service.py", _lines(
        "def connect():",
        f'    """Open the client. Staging {label}: {v}',
        "",
        f"    {c}",
        '    """',
    )


def _issue(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return ".github/ISSUE_TEMPLATE/bug_report.md", _lines(
        "---",
        "name: Bug report",
        "---",
        "**Environment**",
        "- OS: Ubuntu 24.04",
        f"- {label}: {v}",
        "",
        c,
    )


def _ini_comment(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "tox.ini", _lines("[testenv]", f"; {label} used by the smoke tests: {v}", f"; {c}")


def _md_fence(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docs/setup.md", _lines("# Setup", "", "```sh", f"export {n}={v}", "```", "", c)


def _md_curl(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docs/api.md", _lines(
        "## Calling the API",
        "",
        "```bash",
        f'curl https://api.acme.io/v1/items -H "X-Api-Key: {v}"',
        "```",
        "",
        c,
    )


def _rst_example(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docs/configuration.rst", _lines(
        "Configuration",
        "=============",
        "",
        ".. code-block:: yaml",
        "",
        f"    {_field(n)}: {v}",
        "",
        c,
    )


def _md_python(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docs/quickstart.md", _lines(
        "```python", "import acme", f'client = acme.Client(api_key="{v}")', "```", "", c
    )


def _pem_json(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    doc = {"type": "service_account", "project_id": "acme-prod", "private_key": v + "\n", "note": c}
    return "deploy/gcp-credentials.json", json.dumps(doc, indent=2) + "\n"


def _pem_readme(n: str, v: str, label: str, c: str) -> tuple[str, str]:
    return "docs/keys.md", _lines("# Deploy key", "", "```", v, "```", "", c)


SINGLE = frozenset({"one_line"})
# name -> (class, render, accepts multi-line values, accepts URL values)
CONTEXTS: dict[str, tuple[str, Render, bool, bool]] = {
    "python_assign": ("code", _python, True, True),
    "python_kwarg": ("code", _python_kwarg, False, False),
    "js_const": ("code", _javascript, False, True),
    "ts_object": ("code", _js_object, False, False),
    "go_const": ("code", _go, False, True),
    "go_struct": ("code", _go_struct, False, False),
    "ruby_config": ("code", _ruby, False, True),
    "dotenv": ("env", _env, False, True),
    "compose_env": ("yaml", _compose, False, True),
    "yaml_nested": ("yaml", _yaml, True, True),
    "k8s_secret": ("yaml", _k8s_secret, False, True),
    "workflow_env": ("yaml", _workflow, False, True),
    "toml": ("toml", _toml, True, True),
    "terraform": ("toml", _terraform, False, True),
    "ini": ("ini", _ini, False, True),
    "json": ("json", _json, True, True),
    "properties": ("properties", _properties, False, True),
    "dockerfile_env": ("dockerfile", _dockerfile, False, True),
    "dockerfile_env_space": ("dockerfile", _dockerfile_space, False, True),
    "shell_export": ("shell", _shell, True, True),
    "cli_flag": ("cli", _cli_flag, False, True),
    "cli_bearer": ("cli", _cli_header, False, False),
    "url_yaml": ("url", _url, False, True),
    "url_code_default": ("url", _url_code, False, True),
    "md_table": ("prose", _md_table, False, True),
    "readme_line": ("prose", _readme, False, True),
    "code_comment": ("prose", _comment, False, True),
    "docstring": ("prose", _docstring, False, True),
    "issue_template": ("prose", _issue, False, True),
    "ini_comment": ("prose", _ini_comment, False, True),
    "md_shell_example": ("example", _md_fence, False, True),
    "md_curl_example": ("example", _md_curl, False, False),
    "rst_yaml_example": ("example", _rst_example, False, True),
    "md_python_example": ("example", _md_python, False, False),
    "pem_json_escaped": ("example", _pem_json, True, False),
    "pem_in_markdown": ("prose", _pem_readme, True, False),
}
_URL_ONLY = {"url_yaml", "url_code_default"}
_PEM_ONLY = {"pem_json_escaped", "pem_in_markdown"}


def _fits(context: str, fmt: Format) -> bool:
    _, _, multi, url = CONTEXTS[context]
    if fmt.shape == "private_key":
        return multi
    if context in _PEM_ONLY:
        return False
    if fmt.url:
        return url
    return context not in _URL_ONLY


def _label(fmt: Format) -> str:
    return f"{fmt.provider} {fmt.kind.replace('_', ' ')}"


def _canary(rng: random.Random, n: int) -> str:
    return f"Release train {n} ships after the {rng.choice(['north', 'south', 'east'])} review."


def corpus() -> list[Planted]:
    rng = random.Random(SEED)
    used: Counter[str] = Counter()
    out: list[Planted] = []
    for fmt in formats():
        for _ in range(VALUES_PER_KIND):
            drawn, secrets = value(fmt, rng)
            fits = [c for c in CONTEXTS if _fits(c, fmt)]
            least = min(used[c] for c in fits)
            context = rng.choice([c for c in fits if used[c] == least])
            used[context] += 1
            n = len(out)
            canary = _canary(rng, n)
            path, text = CONTEXTS[context][1](fmt.name, drawn, _label(fmt), canary)
            out.append(
                Planted(
                    f"v{n:04d}",
                    fmt,
                    drawn,
                    secrets,
                    context,
                    CONTEXTS[context][0],
                    f"v{n:04d}/{path}",
                    text,
                    canary,
                )
            )
    return out


# Look-alikes named in issue 28's report of false redactions (the rest are harvested).
REPORTED = (
    ("html_escaped_placeholder", "docs/install.md", "Set `DB_PASSWORD=&lt;YOURPASSWORD&gt;`."),
    ("route_target", "config/routes.rb", 'patch "password", to: "sites/passwords#update"'),
    ("css_selector", "app/javascript/settings.js", 'document.querySelector("#add-password")'),
    ("interpolation", "app/models/connection.rb", 'conn = "Server=db;Password=#{password};"'),
    ("self_reference", "deploy/app.yaml", "DB_PASSWORD: DB_PASSWORD"),
    ("self_reference", "Dockerfile", "ENV API_TOKEN=API_TOKEN"),
    ("fake_private_key", "docs/keys.md",
     "-----BEGIN PRIVATE KEY-----this is not a key-----END PRIVATE KEY-----"),
    ("fake_private_key", "tests/fixtures.py",
     'KEY = "-----BEGIN RSA PRIVATE KEY-----\\n...\\n-----END RSA PRIVATE KEY-----"'),
    ("none_default", "app/config.py", "def connect(host, password=None, token=None):"),
    ("env_read", "app/config.py", 'API_KEY = os.environ["API_KEY"]'),
    ("header_name", "app/http.py", 'TOKEN_HEADER = "X-Auth-Token"'),
    ("interpolation", "src/client.js", "const auth = `Bearer ${token}`;"),
)  # fmt: skip


def _indexed_path(path: str) -> str:
    """The harvested file's path, or one we index with the same syntax: a Helm template as
    YAML, an env file or an extension-less script as shell."""
    if language_for(path) is not None:
        return path
    folder, _, name = path.rpartition("/")
    if name.startswith(".env"):  # `.env.example`: planted as a script, not a skipped .env file
        name = "dotenv" + name[4:]
    path = f"{folder}/{name}" if folder else name
    return path + (".yaml" if path.endswith(".tpl") else ".sh")


def lookalikes() -> list[Lookalike]:
    out: list[Lookalike] = []
    for line in LOOKALIKES.read_text().splitlines():
        case = json.loads(line)
        text = "\n".join([*case["before"], case["line"]]) + "\n"
        n = len(out)
        path = _indexed_path(case["path"])
        out.append(
            Lookalike(
                f"l{n:04d}",
                case["category"],
                case["source"],
                f"l{n:04d}/{path}",
                text,
                case["line"].strip(),
            )
        )
    for category, path, line in REPORTED:
        n = len(out)
        out.append(
            Lookalike(f"l{n:04d}", category, "issue 28", f"l{n:04d}/{path}", line + "\n", line)
        )
    return out
