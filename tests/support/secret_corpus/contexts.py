"""Where secrets are written: each context turns a sample into one realistic file.

Every file keeps ordinary lines around the secret, so a test can check that
redaction removed the secret and nothing else. Contexts marked `neutral`
give the secret no telling name (a bare argument, prose, a JSON "value"):
only announced formats are planted there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.support.secret_corpus.tokens import Sample


@dataclass(frozen=True, slots=True)
class Planted:
    sample: Sample
    context: str
    path: str
    text: str


def camel(env: str) -> str:
    first, *rest = env.lower().split("_")
    return first + "".join(w.capitalize() for w in rest)


def dotted(env: str) -> str:
    return env.lower().replace("_", ".")


def shell_word(value: str) -> str:
    """A value as a shell or env file would hold it: quoted when it has ; $ or a space."""
    return f"'{value}'" if re.search(r"[;$ &]", value) else value


Render = Callable[[Sample], tuple[str, str]]  # sample -> (path, text)


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"


NAMED: dict[str, Render] = {
    "python_assign": lambda s: (
        "app/settings.py",
        _lines(
            '"""Service settings."""',
            "",
            "import os",
            "",
            f'{s.env} = "{s.value}"',
            'REGION = os.environ.get("REGION", "eu-west-1")',
        ),
    ),
    "python_kwarg": lambda s: (
        "app/clients.py",
        _lines(
            "from acme import ServiceClient",
            "",
            f'client = ServiceClient(token="{s.value}", timeout=30)',
            "client.ping()",
        ),
    ),
    "shell_export": lambda s: (
        "scripts/deploy.sh",
        _lines(
            "#!/usr/bin/env bash",
            "set -euo pipefail",
            f"export {s.env}={shell_word(s.value)}",
            "./bin/deploy --env production",
        ),
    ),
    "dockerfile_env": lambda s: (
        "Dockerfile",
        _lines(
            "FROM python:3.12-slim",
            "WORKDIR /app",
            f"ENV {s.env}={shell_word(s.value)}",
            'CMD ["python", "-m", "app"]',
        ),
    ),
    "dockerfile_arg": lambda s: (
        "services/api/Dockerfile",
        _lines(
            "FROM node:20-alpine", f"ARG {s.env}={shell_word(s.value)}", "RUN npm ci --omit=dev"
        ),
    ),
    "dotenv": lambda s: (
        "deploy/production.env",
        _lines("APP_ENV=production", f"{s.env}={shell_word(s.value)}", "LOG_LEVEL=info"),
    ),
    "yaml": lambda s: (
        "config/app.yaml",
        _lines("service:", "  name: billing", f"  {s.env.lower()}: {s.value}", "  replicas: 2"),
    ),
    "kubernetes_env": lambda s: (
        "k8s/deployment.yaml",
        _lines(
            "      containers:",
            "        - name: api",
            "          env:",
            f"            - name: {s.env}",
            f'              value: "{s.value}"',
            "            - name: LOG_LEVEL",
            '              value: "info"',
        ),
    ),
    "toml": lambda s: (
        "config/settings.toml",
        _lines("[service]", 'name = "billing"', f'{s.env.lower()} = "{s.value}"', "workers = 4"),
    ),
    "ini": lambda s: (
        "setup.cfg",
        _lines(f"[{s.provider}]", f"{s.env.lower()} = {s.value}", "timeout = 30"),
    ),
    "properties": lambda s: (
        "src/main/resources/application.properties",
        _lines("server.port=8080", f"{dotted(s.env)}={s.value}", "logging.level.root=INFO"),
    ),
    "json_named": lambda s: (
        "config/settings.json",
        _lines(
            "{",
            '  "service": "billing",',
            f'  "{camel(s.env)}": "{s.value}",',
            '  "retries": 3',
            "}",
        ),
    ),
    "js_const": lambda s: (
        "src/config.ts",
        _lines(
            "// Runtime configuration.",
            f"export const {camel(s.env)} = '{s.value}';",
            "export const retries = 3;",
        ),
    ),
    "go_assign": lambda s: (
        "cmd/server/main.go",
        _lines(
            "package main",
            "",
            "func main() {",
            f'\t{camel(s.env)} := "{s.value}"',
            f"\trun({camel(s.env)})",
            "}",
        ),
    ),
    "readme_shell": lambda s: (
        "README.md",
        _lines(
            "## Deploying",
            "",
            "```sh",
            f"export {s.env}={shell_word(s.value)}",
            "make deploy",
            "```",
            "",
            "The deploy takes about two minutes.",
        ),
    ),
}


def _curl(s: Sample) -> tuple[str, str]:
    if s.shape == "url":
        line = f'curl -fsS -X POST -H "Content-Type: application/json" -d @message.json "{s.value}"'
    elif s.shape == "connstr":
        line = f'az storage blob list --container-name backups --connection-string "{s.value}"'
    else:
        line = f'curl -fsS -H "Authorization: Bearer {s.value}" https://api.example.com/v1/me'
    return "scripts/check.sh", _lines(
        "#!/bin/sh", "# Smoke test after a deploy.", line, 'echo "ok"'
    )


def _flag(s: Sample) -> tuple[str, str]:
    flag = {"url": "url", "connstr": "connection-string"}.get(s.shape, "token")
    return "Makefile", _lines(
        ".PHONY: release",
        "release:",
        f"\t./bin/release --{flag} {shell_word(s.value)} --channel stable",
        "\t@echo released",
    )


def _url_credentials(s: Sample) -> tuple[str, str]:
    value = quote(s.value, safe="")
    return "scripts/mirror.sh", _lines(
        "#!/bin/sh",
        f"git clone https://deploy:{value}@git.example.com/acme/app.git",
        "cd app && make",
    )


NAMED["curl_header_or_cli"] = _curl
NAMED["cli_flag"] = _flag

NEUTRAL: dict[str, Render] = {
    "python_bare_arg": lambda s: (
        "app/bootstrap.py",
        _lines("from acme import connect", "", f'client = connect("{s.value}")', "client.sync()"),
    ),
    "js_bare_arg": lambda s: (
        "src/client.js",
        _lines(
            "import { Client } from 'acme';",
            f"const client = new Client('{s.value}');",
            "export default client;",
        ),
    ),
    "go_bare_arg": lambda s: (
        "internal/api/client.go",
        _lines("package api", "", "func Default() *Client {", f'\treturn New("{s.value}")', "}"),
    ),
    "json_neutral": lambda s: (
        "fixtures/integration.json",
        _lines("{", '  "name": "staging",', f'  "value": "{s.value}",', '  "enabled": true', "}"),
    ),
    "yaml_neutral": lambda s: (
        "ci/pipeline.yml",
        _lines("steps:", "  - name: sync", f"    args: [--verbose, {s.value}]", "    timeout: 300"),
    ),
    "markdown_prose": lambda s: (
        "docs/onboarding.md",
        _lines(
            "# Onboarding",
            "",
            f"Use {s.value} to reach the staging account, then run the sync job.",
            "",
            "Ask in #infra if it fails.",
        ),
    ),
}

PEM: dict[str, Callable[[Sample], tuple[str, str]]] = {
    "pem_markdown": lambda s: (
        "docs/tls.md",
        _lines("# TLS", "", "```", s.value, "```", "", "Rotate it every year."),
    ),
    "pem_python": lambda s: (
        "app/keys.py",
        _lines(
            "import ssl",
            "",
            f'{s.env} = """{s.value}"""',
            "",
            "CONTEXT = ssl.create_default_context()",
        ),
    ),
    "pem_json_escaped": lambda s: (
        "config/service-account.json.example",
        _lines(
            "{",
            '  "type": "service_account",',
            '  "private_key": "' + s.value.replace("\n", "\\n") + '\\n",',
            '  "client_email": "deploy@acme.iam.gserviceaccount.com"',
            "}",
        ),
    ),
    "pem_yaml_block": lambda s: (
        "k8s/tls-secret.yaml",
        _lines(
            "apiVersion: v1",
            "kind: Secret",
            "stringData:",
            "  tls.key: |",
            *("    " + line for line in s.value.split("\n")),
            "type: kubernetes.io/tls",
        ),
    ),
    "pem_shell_heredoc": lambda s: (
        "scripts/install-key.sh",
        _lines(
            "#!/bin/sh",
            "cat > /etc/ssl/private/app.key <<'EOF'",
            s.value,
            "EOF",
            "chmod 600 /etc/ssl/private/app.key",
        ),
    ),
    "pem_go_raw": lambda s: (
        "internal/tls/key.go",
        _lines("package tls", "", f"const {camel(s.env)} = `{s.value}`", ""),
    ),
    "pem_js_template": lambda s: (
        "src/keys.js",
        _lines(f"export const {camel(s.env)} = `{s.value}`;", "export const algorithm = 'RS256';"),
    ),
    "pem_terraform_heredoc": lambda s: (
        "infra/main.tf",
        _lines('resource "tls_cert" "app" {', "  private_key_pem = <<EOT", s.value, "EOT", "}"),
    ),
}


def plant(samples: list[Sample]) -> list[Planted]:
    out: list[Planted] = []
    for sample in samples:
        if sample.shape == "pem":
            contexts: dict[str, Render] = dict(PEM)
        else:
            contexts = dict(NAMED)
            if sample.announced:
                contexts.update(NEUTRAL)
            if sample.shape == "token":
                contexts["url_credentials"] = _url_credentials
        for name, render in contexts.items():
            path, text = render(sample)
            out.append(Planted(sample, name, path, text))
    return out


def expected(planted: Planted) -> str:
    """The file as it should come out: each secret replaced, everything else as written."""
    text = planted.text
    secrets = planted.sample.secrets
    if planted.context == "url_credentials":
        secrets = tuple(quote(s, safe="") for s in secrets)
    if planted.context == "pem_json_escaped":
        return text.replace("\\n".join(secrets), "\\n".join("[REDACTED]" for _ in secrets))
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "[REDACTED]")
    return text


def secrets_in(planted: Planted) -> tuple[str, ...]:
    if planted.context == "url_credentials":
        return tuple(quote(s, safe="") for s in planted.sample.secrets)
    return planted.sample.secrets
