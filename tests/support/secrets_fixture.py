"""Fake secrets of many kinds, planted in a repository. None of them is real."""

from __future__ import annotations

from tests.support.gitrepo import GitRepo

# kind -> the secret value that must never leave the repository
PLANTED = {
    "aws_access_key": "AKIAQ3EGRT7NV5XKZP4M",
    "aws_secret_key": "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",
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack_token": "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack_webhook": "https://hooks.slack.com/services/"
    + "T04G7KQ2M/B07RZ3V5N8P/q7VbW2mX9cLtE4rYu1oNs6Ka",
    "openai_key": "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9876",
    "stripe_key": "sk_live_" + "51HabcdEFGHijklMNOPqrstUV",
    "google_api_key": "AIza" + "SyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "db_password": "s3cr3t-Pa55w0rd-db",
    "assigned_password": "hunter2-but-longer",
    "env_secret": "Q2hhbmdlTWVJbW1lZGlhdGVseVBsZWFzZTIwMjY",
    "private_key_body": "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw",
}

SETTINGS_PY = f'''"""Service settings."""

import os

AWS_ACCESS_KEY_ID = "{PLANTED["aws_access_key"]}"
aws_secret_access_key = "{PLANTED["aws_secret_key"]}"
GITHUB_TOKEN = "{PLANTED["github_token"]}"
SLACK_BOT = "{PLANTED["slack_token"]}"
ALERTS_WEBHOOK = "{PLANTED["slack_webhook"]}"
OPENAI = "{PLANTED["openai_key"]}"
STRIPE = "{PLANTED["stripe_key"]}"
MAPS = "{PLANTED["google_api_key"]}"
SESSION = "{PLANTED["jwt"]}"
DATABASE_URL = "postgres://billing:{PLANTED["db_password"]}@db.internal:5432/billing"
admin_password = "{PLANTED["assigned_password"]}"


def database_url():
    """Where the billing database lives; the password comes from the environment."""
    password = os.environ["DB_PASSWORD"]
    return DATABASE_URL
'''

CONFIG_YML = f"""service: billing
log_level: info
signing_secret: {PLANTED["env_secret"]}
"""

KEY_PEM_IN_DOCS = f"""# Deploy notes

Never commit keys like this one:

-----BEGIN RSA PRIVATE KEY-----
{PLANTED["private_key_body"]}
MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw
-----END RSA PRIVATE KEY-----

The deploy script reads the settings from `config.yml`.
"""


def plant(repo: GitRepo) -> str:
    repo.write("billing/settings.py", SETTINGS_PY)
    repo.write("config.yml", CONFIG_YML)
    repo.write("docs/deploy.md", KEY_PEM_IN_DOCS)
    return repo.commit("settings")
