"""Harmless text that looks like a secret: none of it may be redacted.

Rules this corpus pins down (the scrubber's documented behaviour):
- placeholders stay (`<your-token-here>`, `changeme`, `xxxx`, `${TOKEN}`,
  `sk-...`, `hf_xxxx...`), and so do AWS's published example keys;
- publishable keys and public ids stay (Stripe `pk_test_`/`pk_live_`,
  Mapbox `pk.`, PostHog `phc_`, Google OAuth client ids, Twilio account SIDs);
- hashes, digests, UUIDs outside a secret's name, git SHAs, integrity
  attributes, public keys and certificates, base64 fixtures stay.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string

_rng = random.Random("codecite-lookalikes")


def _r(alphabet: str, n: int) -> str:
    return "".join(_rng.choices(alphabet, k=n))


B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
_SHA = hashlib.sha256(b"codecite").hexdigest()
_GIT = hashlib.sha1(b"codecite").hexdigest()
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
_TEXT_B64 = base64.b64encode(b"Hello, this is the body of a test message for the encoder.").decode()
_CERT_B64 = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----\n"
).decode()
_SSH_PUB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _r(B62, 43) + " deploy@ci"
_INTEGRITY = "sha512-" + base64.b64encode(hashlib.sha512(b"left-pad").digest()).decode()
_UUID = "3f2b8c1e-9d4a-4e7b-b6c2-1a5f0e8d7c39"

# name, path, text
LOOKALIKES: list[tuple[str, str, str]] = [
    ("token_url", "app/oauth.py", 'TOKEN_URL = "https://oauth2.googleapis.com/token"\n'),
    (
        "password_reset_template",
        "app/emails.py",
        'PASSWORD_RESET_TEMPLATE = "emails/password_reset.html"\n',
    ),
    ("api_key_header", "app/auth.py", 'API_KEY_HEADER = "X-Api-Key"\n'),
    ("tokenizer_name", "ml/config.py", 'TOKENIZER_NAME = "bert-base-multilingual-uncased"\n'),
    (
        "secret_name_yaml",
        "k8s/external-secret.yaml",
        "spec:\n  secret_name: prod-database-credentials\n",
    ),
    (
        "password_file_yaml",
        "compose.yaml",
        "services:\n  db:\n    password_file: /run/secrets/db_password\n",
    ),
    (
        "stripe_publishable_test",
        "app/payments.py",
        f'STRIPE_PUBLISHABLE_KEY = "pk_test_51{_r(B62, 97)}"\n',
    ),
    (
        "stripe_publishable_live_js",
        "web/checkout.js",
        f"const stripe = Stripe('pk_live_51{_r(B62, 97)}');\n",
    ),
    (
        "google_oauth_client_id",
        "web/login.ts",
        'export const GOOGLE_CLIENT_ID = "407408718192-k4o2s9q1n7f3h8j5l6m0p2r4t6v8x0z1.apps.googleusercontent.com";\n',
    ),
    ("base64_png_fixture", "tests/fixtures.py", f'PNG_PIXEL = "{_PNG}"\n'),
    ("base64_text_fixture_json", "tests/data/message.json", f'{{\n  "body": "{_TEXT_B64}"\n}}\n'),
    (
        "kubeconfig_ca_data",
        "deploy/kubeconfig.yaml",
        f"clusters:\n- cluster:\n    certificate-authority-data: {_CERT_B64}\n    server: https://k8s.internal:6443\n",
    ),
    ("uuid_request_id", "app/tracing.py", f'DEFAULT_REQUEST_ID = "{_UUID}"\n'),
    ("git_sha", "app/version.py", f'PINNED_COMMIT = "{_GIT}"\n'),
    ("image_digest_yaml", "k8s/image.yaml", f"image: ghcr.io/acme/api@sha256:{_SHA}\n"),
    ("checksum_yaml", "ci/release.yaml", f"checksum: sha256:{_SHA}\n"),
    (
        "integrity_attribute",
        "web/index.html",
        f'<script src="/app.js" integrity="{_INTEGRITY}" crossorigin="anonymous"></script>\n',
    ),
    ("integrity_package_json", "web/vendor.json", f'{{\n  "integrity": "{_INTEGRITY}"\n}}\n'),
    ("requirements_hash", "requirements.txt", f"requests==2.32.3 --hash=sha256:{_SHA}\n"),
    (
        "ssh_public_key",
        "deploy/users.yaml",
        f"users:\n  - name: deploy\n    ssh_authorized_keys:\n      - {_SSH_PUB}\n",
    ),
    (
        "pem_public_key",
        "docs/verify.md",
        "```\n-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n-----END PUBLIC KEY-----\n```\n",
    ),
    (
        "pem_certificate",
        "docs/ca.md",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\nRTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD\n-----END CERTIFICATE-----\n",
    ),
    (
        "mapbox_public_token",
        "web/map.js",
        f"mapboxgl.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOiJ{_r(B62, 20)}.{_r(B62, 22)}';\n",
    ),
    (
        "posthog_project_key",
        "web/analytics.ts",
        f"posthog.init('phc_{_r(B62, 43)}', {{ api_host: 'https://eu.posthog.com' }});\n",
    ),
    ("twilio_account_sid", "app/sms.py", f'TWILIO_ACCOUNT_SID = "AC{_r(HEX, 32)}"\n'),
    ("aws_documented_example_id", "docs/aws.md", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"),
    (
        "aws_documented_example_secret",
        "docs/aws.md",
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    ),
    ("env_name_without_value", "scripts/env.sh", "export GITLAB_TOKEN\nunset HF_TOKEN\n"),
    ("env_empty_value", "deploy/example.env", "GITLAB_TOKEN=\nSTRIPE_SECRET_KEY=\n"),
    (
        "dockerfile_arg_no_default",
        "Dockerfile",
        "ARG NPM_TOKEN\nRUN --mount=type=secret,id=npm_token npm ci\n",
    ),
    ("form_password", "app/views.py", 'password = request.form["password"]\n'),
    ("get_token_call", "app/client.py", "token = get_token(user)\n"),
    ("environ_secret", "app/settings.py", 'SECRET_KEY = os.environ["SECRET_KEY"]\n'),
    (
        "i18n_password_hint",
        "web/locales/en.json",
        '{\n  "password_hint": "Use at least twelve characters",\n  "token_expired": "Your session token has expired"\n}\n',
    ),
    (
        "css_colour",
        "web/theme.css",
        ":root {\n  --token-primary: #1a73e8;\n  --token-danger: #d93025;\n}\n",
    ),
    (
        "long_identifier",
        "app/jwt.py",
        "def verify_refresh_token_signature_and_expiry(token, *, leeway_seconds=30):\n    return token\n",
    ),
    ("key_path", "app/tls.py", 'PRIVATE_KEY_PATH = "/etc/ssl/private/server.key"\n'),
    (
        "auth_url",
        "app/oauth.py",
        'AUTHORIZATION_URL = "https://login.example.com/oauth/authorize"\n',
    ),
    ("bearer_header_template", "app/http.py", 'headers = {"Authorization": f"Bearer {token}"}\n'),
    ("placeholder_angle", "README.md", "export GITLAB_TOKEN=<your-token-here>\n"),
    ("placeholder_changeme", "deploy/example.env", "DB_PASSWORD=changeme\n"),
    ("placeholder_xxxx", "docs/setup.md", "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"),
    (
        "placeholder_template_var",
        "ci/deploy.yml",
        "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${NPM_TOKEN}\n",
    ),
    ("placeholder_ellipsis", "docs/openai.md", "OPENAI_API_KEY=sk-...\n"),
    ("placeholder_your_key", "app/settings.py", 'API_KEY = "your_api_key_here"\n'),
    ("token_type_bearer", "app/oauth.py", 'token_type = "bearer"\n'),
    ("max_tokens", "app/llm.py", "MAX_TOKENS = 4096\nmax_tokens: int = 4096\n"),
    ("auth_true_yaml", "config/app.yaml", "auth: true\nauth_backend: ldap\n"),
    ("password_min_length", "config/policy.yaml", "password_min_length: 12\n"),
    (
        "password_hashers",
        "app/settings.py",
        'PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]\n',
    ),
    ("cache_key", "app/cache.py", 'cache_key = f"user:{user_id}:profile"\n'),
    ("content_hashed_asset", "web/manifest.json", '{\n  "main.js": "main.3f9a2c1b.js"\n}\n'),
    (
        "go_sum_in_docs",
        "docs/deps.md",
        "github.com/acme/lib v1.2.3 h1:"
        + base64.b64encode(hashlib.sha256(b"lib").digest()).decode()
        + "\n",
    ),
    (
        "html_password_input",
        "web/login.html",
        '<input type="password" name="password" autocomplete="current-password">\n',
    ),
    ("token_expiry_seconds", "app/auth.py", "TOKEN_EXPIRY_SECONDS = 3600\n"),
    ("api_key_env_var_name", "app/llm.py", 'API_KEY_ENV_VAR = "OPENAI_API_KEY"\n'),
    (
        "secrets_manager_id",
        "app/aws.py",
        'secret = client.get_secret_value(SecretId="prod/billing/db")\n',
    ),
    (
        "jwt_decode_call",
        "app/jwt.py",
        'claims = jwt.decode(token, key=PUBLIC_KEY, algorithms=["RS256"])\n',
    ),
    ("empty_signing_secret", "app/settings.py", 'SLACK_SIGNING_SECRET = ""\n'),
    ("data_uri_image", "web/logo.html", f'<img alt="logo" src="data:image/png;base64,{_PNG}">\n'),
    ("git_commit_env", "deploy/build.env", f"GIT_COMMIT={_GIT}\n"),
    ("jinja_password", "ansible/db.yml", 'db_password: "{{ vault_db_password }}"\n'),
    ("yaml_key_word", "config/sort.yaml", "sort:\n  key: created_at\n  order: desc\n"),
    (
        "webpack_contenthash",
        "webpack.config.js",
        "output: { filename: '[name].[contenthash:8].js' },\n",
    ),
    ("tenant_uuid", "config/azure.yaml", f"tenant_id: {_UUID}\n"),
    (
        "base64_json_fixture",
        "tests/data/claims.json",
        '{\n  "data": "eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ=="\n}\n',
    ),
    (
        "pypi_prefix_prose",
        "docs/release.md",
        "Create a token on PyPI; it starts with `pypi-` and goes in TWINE_PASSWORD.\n",
    ),
    (
        "glpat_prefix_prose",
        "docs/gitlab.md",
        "GitLab personal access tokens start with glpat- followed by twenty characters.\n",
    ),
    ("sha256_python_constant", "tests/test_hash.py", f'EXPECTED_DIGEST = "{_SHA}"\n'),
    (
        "okta_client_id",
        "config/okta.yaml",
        "client_id: 0oa1b2c3d4e5f6g7h8i9\nissuer: https://acme.okta.com/oauth2/default\n",
    ),
    ("password_prompt", "cli/login.py", 'password = getpass.getpass("Password: ")\n'),
    ("token_in_url_path", "app/routes.py", '@app.post("/api/v1/tokens/refresh")\n'),
    ("translation_token_key", "web/i18n.ts", "t('auth.token.expired_message')\n"),
    ("secret_ref_yaml", "k8s/env.yaml", "envFrom:\n  - secretRef:\n      name: billing-secrets\n"),
]
