"""Issue 28, items 2, 3 and 5: unprefixed values under secret-bearing names in every format,
secrets in prose, and commit messages and diffs scrubbed as code is.

Values are drawn here from a seed in the shapes providers document (32 hex digits,
a UUID, 40 base64 characters, a typed password); the look-alikes beside them are the
shapes the issue's report found wrongly redacted, and lines of public repositories'
files (bench/cases/secrets_lookalikes.jsonl).
"""

from __future__ import annotations

import random
import string

import pytest

from bot.ingest.secrets import REDACTED, scrub

_rng = random.Random("issue-28-tests")
HEX32 = "".join(_rng.choices("0123456789abcdef", k=32))
UUID = "{}-{}-4{}-a{}-{}".format(
    *("".join(_rng.choices("0123456789abcdef", k=n)) for n in (8, 4, 3, 3, 12))
)
B64 = "".join(_rng.choices(string.ascii_letters + string.digits + "+/", k=40))
B62 = "".join(_rng.choices(string.ascii_letters + string.digits, k=32))
PASSWORD = "Tq7!vR2#mK9pLx"


@pytest.mark.parametrize(
    ("path", "text", "secret"),
    [
        ("app/settings.py", f'NEWSAPI_KEY = "{HEX32}"', HEX32),
        ("src/config.js", f'const maptilerKey = "{B62}";', B62),
        ("cmd/main.go", f'cosmosDbKey := "{B64}=="', B64),
        ("deploy/app.yaml", f"service:\n  pinecone_key: {UUID}", UUID),
        ("config.toml", f'[datadog]\napi_key = "{HEX32}"', HEX32),
        ("infra/main.tf", f'  rapidapi_key = "{HEX32}"', HEX32),
        ("settings.ini", f"[smtp]\nsmtp_password = {PASSWORD}", PASSWORD),
        ("config/app.json", f'{{"pagerdutyRoutingKey": "{HEX32}"}}', HEX32),
        ("application.properties", f"sumologic.accesskey={B62}", B62),
        ("Dockerfile", f"ENV AGORA_CUSTOMER_SECRET {B62}", B62),
        ("Dockerfile", "ENV DJANGO_SECRET_KEY=*(vyce=#yhazj3bjlmlg_tk%fs09p27@cjz", "*(vyce"),
        ("scripts/run.sh", f'export CYPRESS_RECORD_KEY="{UUID}"', UUID),
        ("scripts/run.sh", f"acme-agent --sumologic-accesskey={B62} --region eu", B62),
        (
            "config/services.yaml",
            f"hook: https://chat.acme.io/hooks/{B62[:26].lower()}",
            B62[:26].lower(),
        ),
        ("config/services.yaml", f"dsn: https://{HEX32}@app.deepsource.com", HEX32),
        ("app/db.py", f'CONN = "Server=tcp:db,1433;User ID=app;Password={PASSWORD};"', PASSWORD),
        ("wp-config.php", f"define('AUTH_SALT', '{B62}');", B62),
    ],
)
def test_unprefixed_values_under_secret_names_are_redacted(path, text, secret):
    out = scrub(text + "\n", path).text
    assert secret not in out and REDACTED in out, out
    assert out.count("\n") == text.count("\n") + 1


@pytest.mark.parametrize(
    ("path", "text", "secret"),
    [
        ("README.md", f"For local testing use the staging datadog api key {HEX32} for now.", HEX32),
        ("docs/env.md", f"| Datadog | `DD_API_KEY` | `{HEX32}` |", HEX32),
        ("docs/env.md", f"| newsapi key | `{B62}` |", B62),
        ("app/jobs.py", f"# sendgrid token for the staging account: {B62}\ndef run(): ...", B62),
        ("app/service.py", f'def f():\n    """Staging api key: {UUID}\n    """', UUID),
        (".github/ISSUE_TEMPLATE/bug.md", f"**Environment**\n- secret key: {B62}", B62),
        ("tox.ini", f"; password used by the smoke tests: {PASSWORD}", PASSWORD),
        ("README.md", f"The admin password is {PASSWORD} until the first login.", PASSWORD),
        ("docs/ably.md", f"Our ably api key: 3Rvk9n.X7MTRE:{B62}", B62),
    ],
)
def test_secrets_in_prose_are_redacted(path, text, secret):
    out = scrub(text + "\n", path).text
    assert secret not in out, out
    assert out.count("\n") == text.count("\n") + 1


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("docs/install.md", "Set `DB_PASSWORD=&lt;YOURPASSWORD&gt;` first."),
        ("config/routes.rb", 'patch "password", to: "sites/passwords#update"'),
        ("app/javascript/settings.js", 'document.querySelector("#add-password")'),
        ("app/models/connection.rb", 'conn = "Server=db;Password=#{password};"'),
        ("deploy/app.yaml", "DB_PASSWORD: DB_PASSWORD"),
        ("Dockerfile", "ENV API_TOKEN=API_TOKEN"),
        ("app/config.py", "def connect(host, password=None, token=None):"),
        (".github/workflows/ci.yml", "          password: ${{ secrets.DOCKERHUB_TOKEN }}"),
        (
            ".github/workflows/ci.yml",
            "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
        ),
        (
            "app/views/mailer.html.erb",
            "<%= link_to 'Change', edit_password_url(@resource, reset_password_token: @token) %>",
        ),
        (
            "README.md",
            "The cache key is 3f2b8c1e9d4a4e7bb6c21a5f0e8d7c39 (the sha256 of the path).",
        ),
        (
            "README.md",
            "Run `git show 3d3c42e5aac5ba805825da76410c181273ba90b1` to see the token change.",
        ),
        ("docs/api.md", "Send the token in the `X-Auth-Token` header; see PKCS7PrivateKeyTypes."),
        ("web/app.js", "{ key: '9df21e95-3848-409d-8f94-c675cdfee839', value: 'Americas' }"),
        ("app/settings.py", "SECRET_KEY = os.environ['SECRET_KEY']"),
        ("docs/keys.md", "-----BEGIN PRIVATE KEY-----this is not a key-----END PRIVATE KEY-----"),
    ],
)
def test_lookalikes_are_left_alone(path, line):
    assert scrub(line + "\n", path).text == line + "\n"


# Item 5: the history ingest (another branch) scrubs commit messages and diffs with
# `scrub(text, path)`; a message or a diff must lose its secrets as a file does.
COMMIT_MESSAGE = f"""Rotate the staging credentials

The old key {HEX32} was pasted in #412 by mistake; the new one is
in the vault. Token for the smoke tests: {B62}

Co-authored-by: Dana Smith <dana@example.com>
Signed-off-by: Lee Wong <lee@example.com>
"""
DIFF = f"""diff --git a/deploy/production.env b/deploy/production.env
index 3d3c42e..5aac5ba 100644
--- a/deploy/production.env
+++ b/deploy/production.env
@@ -1,3 +1,3 @@
 LOG_LEVEL=info
-API_KEY=changeme
+API_KEY={B62}
+DD_API_KEY={HEX32}
+GITHUB_TOKEN=ghp_{B62[:36].ljust(36, "x")}
"""


def test_a_commit_message_loses_its_secrets_and_keeps_its_trailers():
    out = scrub(COMMIT_MESSAGE, "").text
    assert HEX32 not in out and B62 not in out
    assert "Co-authored-by: Dana Smith <dana@example.com>" in out
    assert "Signed-off-by: Lee Wong <lee@example.com>" in out
    assert "pasted in #412 by mistake" in out
    assert out.count("\n") == COMMIT_MESSAGE.count("\n")


def test_a_unified_diff_loses_the_secrets_it_adds():
    for path in ("deploy/production.env", "deploy/production.env.diff", ""):
        out = scrub(DIFF, path).text
        assert HEX32 not in out and B62 not in out and "ghp_" not in out, (path, out)
        assert "index 3d3c42e..5aac5ba 100644" in out and "-API_KEY=changeme" in out
        assert out.count("\n") == DIFF.count("\n")
