"""Fake credentials in each provider's documented format, generated from a seed.

Bodies are random (seeded, so the corpus is the same on every run) in the
documented alphabet and length; none of them is a working credential.
`announced` says the token carries its provider's prefix or shape, so a
reader could tell it is a secret anywhere; the others (a Datadog key is 32
hex digits, an AWS secret key 40 base64 characters) are only recognisable
by the name they are given, and are planted only where they have one.
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass

B62 = string.ascii_letters + string.digits
B64U = B62 + "_-"
B64 = B62 + "+/"
HEX = "0123456789abcdef"
UPNUM = string.ascii_uppercase + string.digits
LOWNUM = string.ascii_lowercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True, slots=True)
class Sample:
    provider: str
    kind: str
    env: str  # the variable name people give it
    value: str  # what is written in the file
    secrets: tuple[str, ...]  # the parts that must not survive
    announced: bool = True
    shape: str = "token"  # token | url | connstr | pem


class Gen:
    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def r(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choices(alphabet, k=n))

    def digits(self, n: int) -> str:
        return str(self.rng.randint(1, 9)) + self.r(string.digits, n - 1)

    def uuid(self) -> str:
        h = self.r(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(nbytes)).decode()

    def b64url_json(self, obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    def github(self, prefix: str) -> str:
        """GitHub: 30 random base62 characters, then their CRC32 in 6 base62 digits."""
        body = self.r(B62, 30)
        crc = zlib.crc32(body.encode())
        digits = ""
        while crc:
            crc, rem = divmod(crc, 62)
            digits = B62[rem] + digits
        return prefix + body + digits.rjust(6, "0")

    def jwt(self, header: dict[str, str], claims: dict[str, object], sig: int = 43) -> str:
        return f"{self.b64url_json(header)}.{self.b64url_json(claims)}.{self.r(B64U, sig)}"

    def password(self, n: int = 20) -> str:
        return self.r(B62, n - 2) + self.rng.choice("!#%*-_") + self.r(string.digits, 1)

    def pem(self, label: str, lines: int = 6) -> str:
        body = "\n".join(self.b64(48) for _ in range(lines))
        return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


Maker = Callable[[Gen], "str | tuple[str, str]"]  # value, or (value, the secret inside it)

# provider, kind, variable name, maker; `announced` is false for prefix-less formats.
TOKEN_FORMATS: list[tuple[str, str, str, Maker, bool]] = [
    ("github", "classic_pat", "GITHUB_TOKEN", lambda g: g.github("ghp_"), True),
    ("github", "oauth", "GH_OAUTH_TOKEN", lambda g: g.github("gho_"), True),
    ("github", "app_installation", "GH_APP_TOKEN", lambda g: g.github("ghs_"), True),
    (
        "github",
        "fine_grained_pat",
        "GITHUB_PAT",
        lambda g: "github_pat_11" + g.r(UPNUM, 20) + "_" + g.r(B62, 59),
        True,
    ),
    ("gitlab", "pat", "GITLAB_TOKEN", lambda g: "glpat-" + g.r(B64U, 20), True),
    ("gitlab", "runner", "RUNNER_AUTH_TOKEN", lambda g: "glrt-" + g.r(B64U, 20), True),
    ("gitlab", "deploy", "GITLAB_DEPLOY_TOKEN", lambda g: "gldt-" + g.r(B64U, 20), True),
    ("gitlab", "trigger", "PIPELINE_TRIGGER_TOKEN", lambda g: "glptt-" + g.r(HEX, 40), True),
    ("gitlab", "oauth_secret", "GITLAB_OAUTH_SECRET", lambda g: "gloas-" + g.r(HEX, 64), True),
    ("huggingface", "user", "HF_TOKEN", lambda g: "hf_" + g.r(string.ascii_letters, 34), True),
    ("digitalocean", "pat", "DIGITALOCEAN_TOKEN", lambda g: "dop_v1_" + g.r(HEX, 64), True),
    ("digitalocean", "oauth", "DO_OAUTH_TOKEN", lambda g: "doo_v1_" + g.r(HEX, 64), True),
    (
        "slack",
        "bot",
        "SLACK_BOT_TOKEN",
        lambda g: f"xoxb-{g.digits(11)}-{g.digits(13)}-{g.r(B62, 24)}",
        True,
    ),
    (
        "slack",
        "user",
        "SLACK_USER_TOKEN",
        lambda g: f"xoxp-{g.digits(11)}-{g.digits(11)}-{g.digits(13)}-{g.r(HEX, 32)}",
        True,
    ),
    ("slack", "config", "SLACK_CONFIG_TOKEN", lambda g: "xoxe.xoxp-1-" + g.r(B62, 140), True),
    ("slack", "refresh", "SLACK_REFRESH_TOKEN", lambda g: "xoxe-1-" + g.r(B62, 140), True),
    (
        "slack",
        "app",
        "SLACK_APP_TOKEN",
        lambda g: f"xapp-1-A{g.r(UPNUM, 10)}-{g.digits(13)}-{g.r(HEX, 64)}",
        True,
    ),
    (
        "sentry",
        "org_token",
        "SENTRY_AUTH_TOKEN",
        lambda g: (
            "sntrys_"
            + g.b64url_json(
                {
                    "iat": 1718000000.1,
                    "url": "https://sentry.io",
                    "region_url": "https://us.sentry.io",
                    "org": "acme",
                }
            )
            + "_"
            + g.r(B64U, 43)
        ),
        True,
    ),
    ("sentry", "user_token", "SENTRY_USER_TOKEN", lambda g: "sntryu_" + g.r(HEX, 64), True),
    ("nuget", "api_key", "NUGET_API_KEY", lambda g: "oy2" + g.r(LOWNUM, 43), True),
    ("notion", "integration", "NOTION_TOKEN", lambda g: "secret_" + g.r(B62, 43), True),
    ("notion", "ntn", "NOTION_API_KEY", lambda g: "ntn_" + g.digits(11) + g.r(B62, 35), True),
    ("vault", "service", "VAULT_TOKEN", lambda g: "hvs." + g.r(B64U, 90), True),
    ("vault", "batch", "VAULT_BATCH_TOKEN", lambda g: "hvb." + g.r(B64U, 120), True),
    ("flyio", "macaroon", "FLY_API_TOKEN", lambda g: "fm2_" + g.b64(180), True),
    (
        "azure",
        "ad_client_secret",
        "AZURE_CLIENT_SECRET",
        lambda g: g.r(B62, 3) + g.r(string.digits, 1) + "Q~" + g.r(B64U + "~.", 34),
        True,
    ),
    (
        "kubernetes",
        "service_account_jwt",
        "K8S_SA_TOKEN",
        lambda g: g.jwt(
            {"alg": "RS256", "kid": g.r(B64U, 43)},
            {
                "iss": "kubernetes/serviceaccount",
                "kubernetes.io/serviceaccount/namespace": "prod",
                "sub": "system:serviceaccount:prod:deployer",
            },
            342,
        ),
        True,
    ),
    (
        "kubernetes",
        "client_key_data",
        "KUBE_CLIENT_KEY_DATA",
        lambda g: base64.b64encode(g.pem("RSA PRIVATE KEY").encode()).decode(),
        True,
    ),
    (
        "1password",
        "service_account",
        "OP_SERVICE_ACCOUNT_TOKEN",
        lambda g: (
            "ops_"
            + g.b64url_json(
                {
                    "signInAddress": "acme.1password.com",
                    "userAuth": {
                        "method": "SRPg-4096",
                        "alg": "PBES2g-HS256",
                        "iterations": 650000,
                        "salt": g.r(B64U, 22),
                    },
                    "email": g.r(LOWNUM, 12) + "@1passwordserviceaccounts.com",
                    "srpX": g.r(HEX, 64),
                    "muk": {
                        "alg": "A256GCM",
                        "ext": True,
                        "k": g.r(B64U, 43),
                        "key_ops": ["encrypt", "decrypt"],
                        "kty": "oct",
                        "kid": "mp",
                    },
                    "secretKey": "A3-" + g.r(UPNUM, 6) + "-" + g.r(UPNUM, 6),
                    "deviceUuid": g.r(LOWNUM, 26),
                }
            )
        ),
        True,
    ),
    (
        "1password",
        "secret_key",
        "OP_SECRET_KEY",
        lambda g: "A3-" + "-".join(g.r(UPNUM, n) for n in (6, 6, 5, 5, 5, 5)),
        True,
    ),
    ("shopify", "access_token", "SHOPIFY_ACCESS_TOKEN", lambda g: "shpat_" + g.r(HEX, 32), True),
    ("shopify", "shared_secret", "SHOPIFY_SHARED_SECRET", lambda g: "shpss_" + g.r(HEX, 32), True),
    ("shopify", "custom_app", "SHOPIFY_CUSTOM_APP_TOKEN", lambda g: "shpca_" + g.r(HEX, 32), True),
    (
        "sourcegraph",
        "access_token",
        "SRC_ACCESS_TOKEN",
        lambda g: "sgp_" + g.r(HEX, 16) + "_" + g.r(HEX, 40),
        True,
    ),
    (
        "pypi",
        "api_token",
        "TWINE_PASSWORD",
        lambda g: "pypi-AgEIcHlwaS5vcmc" + g.r(B64U, 150),
        True,
    ),
    ("databricks", "pat", "DATABRICKS_TOKEN", lambda g: "dapi" + g.r(HEX, 32), True),
    (
        "anthropic",
        "api_key",
        "ANTHROPIC_API_KEY",
        lambda g: "sk-ant-api03-" + g.r(B64U, 93) + "AA",
        True,
    ),
    ("openai", "project_key", "OPENAI_API_KEY", lambda g: "sk-proj-" + g.r(B64U, 120), True),
    (
        "openai",
        "legacy_key",
        "OPENAI_KEY",
        lambda g: "sk-" + g.r(B62, 20) + "T3BlbkFJ" + g.r(B62, 20),
        True,
    ),
    ("openai", "service_account", "OPENAI_SVC_KEY", lambda g: "sk-svcacct-" + g.r(B64U, 120), True),
    ("stripe", "secret_live", "STRIPE_SECRET_KEY", lambda g: "sk_live_51" + g.r(B62, 97), True),
    (
        "stripe",
        "restricted_live",
        "STRIPE_RESTRICTED_KEY",
        lambda g: "rk_live_51" + g.r(B62, 97),
        True,
    ),
    (
        "stripe",
        "secret_test",
        "STRIPE_TEST_SECRET_KEY",
        lambda g: "sk_test_51" + g.r(B62, 97),
        True,
    ),
    ("stripe", "webhook_secret", "STRIPE_WEBHOOK_SECRET", lambda g: "whsec_" + g.r(B62, 32), True),
    ("twilio", "api_key_sid", "TWILIO_API_KEY", lambda g: "SK" + g.r(HEX, 32), True),
    ("twilio", "auth_token", "TWILIO_AUTH_TOKEN", lambda g: g.r(HEX, 32), False),
    (
        "sendgrid",
        "api_key",
        "SENDGRID_API_KEY",
        lambda g: "SG." + g.r(B64U, 22) + "." + g.r(B64U, 43),
        True,
    ),
    ("mailgun", "api_key", "MAILGUN_API_KEY", lambda g: "key-" + g.r(HEX, 32), True),
    (
        "mailchimp",
        "api_key",
        "MAILCHIMP_API_KEY",
        lambda g: g.r(HEX, 32) + "-us" + str(g.rng.randint(1, 21)),
        True,
    ),
    (
        "discord",
        "bot_token",
        "DISCORD_TOKEN",
        lambda g: (
            base64.b64encode(g.digits(18).encode()).decode().rstrip("=")
            + "."
            + g.r(B64U, 6)
            + "."
            + g.r(B64U, 38)
        ),
        True,
    ),
    (
        "telegram",
        "bot_token",
        "TELEGRAM_BOT_TOKEN",
        lambda g: g.digits(10) + ":AA" + g.r(B64U, 33),
        True,
    ),
    (
        "atlassian",
        "api_token",
        "JIRA_API_TOKEN",
        lambda g: "ATATT3xFfGF0" + g.r(B64U, 170) + "=" + g.r("0123456789ABCDEF", 8),
        True,
    ),
    ("linear", "api_key", "LINEAR_API_KEY", lambda g: "lin_api_" + g.r(B62, 40), True),
    (
        "postman",
        "api_key",
        "POSTMAN_API_KEY",
        lambda g: "PMAK-" + g.r(HEX, 24) + "-" + g.r(HEX, 34),
        True,
    ),
    ("doppler", "service_token", "DOPPLER_TOKEN", lambda g: "dp.st.prd." + g.r(B62, 43), True),
    (
        "doppler",
        "personal_token",
        "DOPPLER_PERSONAL_TOKEN",
        lambda g: "dp.pt." + g.r(B62, 43),
        True,
    ),
    ("pulumi", "access_token", "PULUMI_ACCESS_TOKEN", lambda g: "pul-" + g.r(HEX, 40), True),
    (
        "terraform",
        "cloud_token",
        "TF_TOKEN_app_terraform_io",
        lambda g: g.r(B62, 14) + ".atlasv1." + g.r(B64U, 67),
        True,
    ),
    (
        "grafana",
        "cloud_token",
        "GRAFANA_CLOUD_TOKEN",
        lambda g: (
            "glc_"
            + base64.b64encode(
                json.dumps(
                    {
                        "o": g.digits(6),
                        "n": "deploy",
                        "k": g.r(B62, 24),
                        "m": {"r": "prod-us-east-0"},
                    }
                ).encode()
            ).decode()
        ),
        True,
    ),
    (
        "grafana",
        "service_account",
        "GRAFANA_SA_TOKEN",
        lambda g: "glsa_" + g.r(B62, 32) + "_" + g.r(HEX, 8),
        True,
    ),
    ("newrelic", "user_key", "NEW_RELIC_API_KEY", lambda g: "NRAK-" + g.r(UPNUM, 27), True),
    ("newrelic", "license_key", "NEW_RELIC_LICENSE_KEY", lambda g: g.r(HEX, 36) + "NRAL", True),
    ("datadog", "api_key", "DD_API_KEY", lambda g: g.r(HEX, 32), False),
    ("datadog", "app_key", "DD_APP_KEY", lambda g: g.r(HEX, 40), False),
    ("heroku", "api_key", "HEROKU_API_KEY", lambda g: "HRKU-AA" + g.r(B64U, 58), True),
    ("heroku", "legacy_api_key", "HEROKU_API_TOKEN", lambda g: g.uuid(), False),
    ("cloudflare", "api_token", "CLOUDFLARE_API_TOKEN", lambda g: g.r(B64U, 40), False),
    (
        "cloudflare",
        "origin_ca_key",
        "CF_ORIGIN_CA_KEY",
        lambda g: "v1.0-" + g.r(HEX, 24) + "-" + g.r(HEX, 146),
        True,
    ),
    ("square", "access_token", "SQUARE_ACCESS_TOKEN", lambda g: "EAAA" + g.r(B64U, 60), True),
    (
        "square",
        "oauth_secret",
        "SQUARE_APPLICATION_SECRET",
        lambda g: "sq0csp-" + g.r(B64U, 43),
        True,
    ),
    (
        "braintree",
        "access_token",
        "BRAINTREE_ACCESS_TOKEN",
        lambda g: f"access_token$production${g.r(LOWNUM, 16)}${g.r(HEX, 32)}",
        True,
    ),
    ("okta", "api_token", "OKTA_API_TOKEN", lambda g: "00" + g.r(B64U, 40), False),
    ("age", "secret_key", "SOPS_AGE_KEY", lambda g: "AGE-SECRET-KEY-1" + g.r(BECH32, 58), True),
    (
        "jwt",
        "hs256",
        "SESSION_JWT",
        lambda g: g.jwt(
            {"alg": "HS256", "typ": "JWT"}, {"sub": g.digits(8), "role": "admin", "exp": 1893456000}
        ),
        True,
    ),
    (
        "aws",
        "access_key_id",
        "AWS_ACCESS_KEY_ID",
        lambda g: "AKIA" + g.r(UPNUM.replace("0", "").replace("1", ""), 16),
        True,
    ),
    ("aws", "secret_access_key", "AWS_SECRET_ACCESS_KEY", lambda g: g.r(B64, 40), False),
    ("google", "api_key", "GOOGLE_API_KEY", lambda g: "AIza" + g.r(B64U, 35), True),
    (
        "google",
        "oauth_client_secret",
        "GOOGLE_CLIENT_SECRET",
        lambda g: "GOCSPX-" + g.r(B64U, 28),
        True,
    ),
    (
        "google",
        "oauth_access_token",
        "GOOGLE_ACCESS_TOKEN",
        lambda g: "ya29." + g.r(B64U, 150),
        True,
    ),
    (
        "google",
        "oauth_refresh_token",
        "GOOGLE_REFRESH_TOKEN",
        lambda g: "1//0" + g.r(B64U, 100),
        True,
    ),
    ("npm", "access_token", "NPM_TOKEN", lambda g: "npm_" + g.r(B62, 36), True),
    (
        "alibaba",
        "access_key_id",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        lambda g: "LTAI" + g.r(B62, 20),
        True,
    ),
    ("adafruit", "io_key", "ADAFRUIT_IO_KEY", lambda g: "aio_" + g.r(B62, 28), True),
    (
        "airtable",
        "pat",
        "AIRTABLE_TOKEN",
        lambda g: "pat" + g.r(B62, 14) + "." + g.r(HEX, 64),
        True,
    ),
    (
        "asana",
        "pat",
        "ASANA_TOKEN",
        lambda g: "2/1" + g.digits(15) + "/1" + g.digits(15) + ":" + g.r(HEX, 32),
        True,
    ),
    ("beamer", "api_key", "BEAMER_API_KEY", lambda g: "b_" + g.r(B64U, 43) + "=", True),
    ("bitbucket", "app_password", "BITBUCKET_APP_PASSWORD", lambda g: "ATBB" + g.r(B62, 32), True),
    ("buildkite", "api_token", "BUILDKITE_API_TOKEN", lambda g: "bkua_" + g.r(HEX, 40), True),
    (
        "circleci",
        "personal_token",
        "CIRCLECI_TOKEN",
        lambda g: "CCIPAT_" + g.r(B62, 22) + "_" + g.r(HEX, 40),
        True,
    ),
    ("clojars", "deploy_token", "CLOJARS_PASSWORD", lambda g: "CLOJARS_" + g.r(LOWNUM, 60), True),
    (
        "contentful",
        "management_token",
        "CONTENTFUL_MANAGEMENT_TOKEN",
        lambda g: "CFPAT-" + g.r(B64U, 43),
        True,
    ),
    (
        "dynatrace",
        "api_token",
        "DT_API_TOKEN",
        lambda g: "dt0c01." + g.r(UPNUM, 24) + "." + g.r(UPNUM, 64),
        True,
    ),
    ("easypost", "api_key", "EASYPOST_API_KEY", lambda g: "EZAK" + g.r(B62, 54), True),
    ("facebook", "page_token", "FACEBOOK_ACCESS_TOKEN", lambda g: "EAAG" + g.r(B62, 180), True),
    ("figma", "pat", "FIGMA_TOKEN", lambda g: "figd_" + g.r(B64U, 40), True),
    ("frameio", "dev_token", "FRAMEIO_TOKEN", lambda g: "fio-u-" + g.r(B64U, 64), True),
    (
        "gocardless",
        "access_token",
        "GOCARDLESS_ACCESS_TOKEN",
        lambda g: "live_" + g.r(B64U, 40),
        True,
    ),
    (
        "harness",
        "pat",
        "HARNESS_API_KEY",
        lambda g: "pat." + g.r(B64U, 22) + "." + g.r(HEX, 24) + "." + g.r(B62, 20),
        True,
    ),
    ("infracost", "api_key", "INFRACOST_API_KEY", lambda g: "ico-" + g.r(B62, 32), True),
    ("jfrog", "api_key", "ARTIFACTORY_API_KEY", lambda g: "AKCp" + g.r(B62, 69), True),
    (
        "jfrog",
        "reference_token",
        "JFROG_ACCESS_TOKEN",
        lambda g: "cmVmdGtuOjAxOj" + g.r(B62, 50),
        True,
    ),
    ("launchdarkly", "api_key", "LD_API_KEY", lambda g: "api-" + g.uuid(), True),
    ("launchdarkly", "sdk_key", "LD_SDK_KEY", lambda g: "sdk-" + g.uuid(), True),
    (
        "mapbox",
        "secret_token",
        "MAPBOX_SECRET_TOKEN",
        lambda g: "sk.eyJ1Ijoi" + g.r(B64U, 50) + "." + g.r(B64U, 22),
        True,
    ),
    ("netlify", "pat", "NETLIFY_AUTH_TOKEN", lambda g: "nfp_" + g.r(B62, 40), True),
    (
        "planetscale",
        "service_token",
        "PLANETSCALE_SERVICE_TOKEN",
        lambda g: "pscale_tkn_" + g.r(B64U, 43),
        True,
    ),
    (
        "planetscale",
        "password",
        "PLANETSCALE_DB_PASSWORD",
        lambda g: "pscale_pw_" + g.r(B64U, 43),
        True,
    ),
    ("prefect", "api_key", "PREFECT_API_KEY", lambda g: "pnu_" + g.r(B62, 36), True),
    ("readme", "api_key", "README_API_KEY", lambda g: "rdme_" + g.r(LOWNUM, 70), True),
    ("rubygems", "api_key", "GEM_HOST_API_KEY", lambda g: "rubygems_" + g.r(HEX, 48), True),
    ("scalingo", "api_token", "SCALINGO_API_TOKEN", lambda g: "tk-us-" + g.r(B64U, 48), True),
    (
        "brevo",
        "api_key",
        "BREVO_API_KEY",
        lambda g: "xkeysib-" + g.r(HEX, 64) + "-" + g.r(B62, 16),
        True,
    ),
    ("shippo", "live_token", "SHIPPO_API_TOKEN", lambda g: "shippo_live_" + g.r(HEX, 40), True),
    ("supabase", "access_token", "SUPABASE_ACCESS_TOKEN", lambda g: "sbp_" + g.r(HEX, 40), True),
    ("supabase", "secret_key", "SUPABASE_SECRET_KEY", lambda g: "sb_secret_" + g.r(B64U, 31), True),
    (
        "typeform",
        "pat",
        "TYPEFORM_TOKEN",
        lambda g: "tfp_" + g.r(B64U, 44) + "_" + g.r(B64U, 14),
        True,
    ),
    ("dropbox", "short_lived", "DROPBOX_ACCESS_TOKEN", lambda g: "sl." + g.r(B64U, 135), True),
    ("duffel", "test_token", "DUFFEL_ACCESS_TOKEN", lambda g: "duffel_test_" + g.r(B64U, 43), True),
    (
        "flutterwave",
        "secret_key",
        "FLW_SECRET_KEY",
        lambda g: "FLWSECK_TEST-" + g.r(HEX, 32) + "-X",
        True,
    ),
    ("octopus", "api_key", "OCTOPUS_API_KEY", lambda g: "API-" + g.r(UPNUM, 26), True),
    (
        "plaid",
        "access_token",
        "PLAID_ACCESS_TOKEN",
        lambda g: "access-production-" + g.uuid(),
        True,
    ),
    (
        "pinecone",
        "api_key",
        "PINECONE_API_KEY",
        lambda g: "pcsk_" + g.r(B62, 5) + "_" + g.r(B62, 64),
        True,
    ),
    ("replicate", "api_token", "REPLICATE_API_TOKEN", lambda g: "r8_" + g.r(B62, 37), True),
    ("groq", "api_key", "GROQ_API_KEY", lambda g: "gsk_" + g.r(B62, 52), True),
    ("xai", "api_key", "XAI_API_KEY", lambda g: "xai-" + g.r(B62, 80), True),
    ("perplexity", "api_key", "PERPLEXITY_API_KEY", lambda g: "pplx-" + g.r(B62, 48), True),
    (
        "tailscale",
        "auth_key",
        "TS_AUTHKEY",
        lambda g: "tskey-auth-k" + g.r(B62, 11) + "CNTRL-" + g.r(B62, 33),
        True,
    ),
    ("render", "api_key", "RENDER_API_KEY", lambda g: "rnd_" + g.r(B62, 32), True),
    ("deno", "deploy_token", "DENO_DEPLOY_TOKEN", lambda g: "ddp_" + g.r(B62, 36), True),
    ("docker", "hub_pat", "DOCKERHUB_TOKEN", lambda g: "dckr_pat_" + g.r(B64U, 27), True),
    (
        "firebase",
        "fcm_server_key",
        "FCM_SERVER_KEY",
        lambda g: "AAAA" + g.r(B64U, 7) + ":APA91b" + g.r(B64U, 134),
        True,
    ),
    (
        "twitter",
        "bearer_token",
        "TWITTER_BEARER_TOKEN",
        lambda g: "AAAAAAAAAAAAAAAAAAAAA" + g.r(B62, 20) + "%2B" + g.r(B62, 60),
        True,
    ),
    (
        "salesforce",
        "access_token",
        "SF_ACCESS_TOKEN",
        lambda g: "00D" + g.r(B62, 12) + "!" + g.r(B62 + ".", 96),
        True,
    ),
    (
        "clickup",
        "api_token",
        "CLICKUP_API_TOKEN",
        lambda g: "pk_" + g.digits(8) + "_" + g.r(UPNUM, 32),
        True,
    ),
    ("hubspot", "private_app", "HUBSPOT_ACCESS_TOKEN", lambda g: "pat-na1-" + g.uuid(), True),
    ("sonarqube", "user_token", "SONAR_TOKEN", lambda g: "squ_" + g.r(HEX, 40), True),
    ("openrouter", "api_key", "OPENROUTER_API_KEY", lambda g: "sk-or-v1-" + g.r(HEX, 64), True),
    ("cerebras", "api_key", "CEREBRAS_API_KEY", lambda g: "csk-" + g.r(LOWNUM, 48), True),
    (
        "langsmith",
        "api_key",
        "LANGSMITH_API_KEY",
        lambda g: "lsv2_pt_" + g.r(HEX, 32) + "_" + g.r(HEX, 10),
        True,
    ),
    ("together", "api_key", "TOGETHER_API_KEY", lambda g: "tgp_v1_" + g.r(B64U, 43), True),
    (
        "intercom",
        "access_token",
        "INTERCOM_ACCESS_TOKEN",
        lambda g: base64.b64encode(f"tok:{g.uuid()}:1:0".encode()).decode(),
        True,
    ),
    ("posthog", "personal_key", "POSTHOG_PERSONAL_API_KEY", lambda g: "phx_" + g.r(B62, 47), True),
    ("lob", "live_key", "LOB_API_KEY", lambda g: "live_" + g.r(HEX, 35), True),
    ("yandex", "api_key", "YC_API_KEY", lambda g: "AQVN" + g.r(B64U, 36), True),
    ("tencent", "secret_id", "TENCENTCLOUD_SECRET_ID", lambda g: "AKID" + g.r(B62, 32), True),
    (
        "azure_devops",
        "pat",
        "AZURE_DEVOPS_PAT",
        lambda g: g.r("abcdefghijklmnopqrstuvwxyz234567", 52),
        False,
    ),
    ("algolia", "admin_key", "ALGOLIA_ADMIN_KEY", lambda g: g.r(HEX, 32), False),
    ("jenkins", "api_token", "JENKINS_API_TOKEN", lambda g: "11" + g.r(HEX, 32), False),
    (
        "http_basic",
        "authorization",
        "BASIC_AUTH_CREDENTIALS",
        lambda g: base64.b64encode(f"deploy:{g.password()}".encode()).decode(),
        False,
    ),
    ("generic", "db_password", "DB_PASSWORD", lambda g: g.password(), False),
    (
        "generic",
        "django_secret_key",
        "SECRET_KEY",
        lambda g: g.r(LOWNUM + "!@#%^&*-_=+", 50),
        False,
    ),
]

# provider, kind, variable name, maker returning (value, secret), shape.
URL_FORMATS: list[tuple[str, str, str, Callable[[Gen], tuple[str, str]], str]] = [
    (
        "slack",
        "webhook",
        "SLACK_WEBHOOK_URL",
        lambda g: _split(
            "https://hooks.slack.com/services/",
            f"T{g.r(UPNUM, 8)}/B{g.r(UPNUM, 10)}/{g.r(B62, 24)}",
        ),
        "url",
    ),
    (
        "discord",
        "webhook",
        "DISCORD_WEBHOOK_URL",
        lambda g: _split("https://discord.com/api/webhooks/", f"{g.digits(18)}/{g.r(B64U, 68)}"),
        "url",
    ),
    (
        "teams",
        "webhook",
        "TEAMS_WEBHOOK_URL",
        lambda g: _split(
            "https://acme.webhook.office.com/webhookb2/",
            f"{g.uuid()}@{g.uuid()}/IncomingWebhook/{g.r(HEX, 32)}/{g.uuid()}",
        ),
        "url",
    ),
    (
        "zapier",
        "webhook",
        "ZAPIER_HOOK_URL",
        lambda g: _split(
            "https://hooks.zapier.com/hooks/catch/", f"{g.digits(7)}/{g.r(LOWNUM, 7)}", "/"
        ),
        "url",
    ),
    (
        "sentry",
        "dsn",
        "SENTRY_DSN",
        lambda g: _split(
            "https://", g.r(HEX, 32), f"@o{g.digits(6)}.ingest.sentry.io/{g.digits(7)}"
        ),
        "url",
    ),
    (
        "postgres",
        "url_password",
        "DATABASE_URL",
        lambda g: _split("postgres://billing:", g.password(), "@db.internal:5432/billing"),
        "url",
    ),
    (
        "mysql",
        "url_password",
        "MYSQL_URL",
        lambda g: _split("mysql://root:", g.password(), "@10.0.4.12:3306/shop"),
        "url",
    ),
    (
        "mongodb",
        "url_password",
        "MONGODB_URI",
        lambda g: _split(
            "mongodb+srv://app:", g.password(), "@cluster0.ab1cd.mongodb.net/prod?retryWrites=true"
        ),
        "url",
    ),
    (
        "redis",
        "url_password",
        "REDIS_URL",
        lambda g: _split("redis://:", g.password(), "@cache.internal:6379/0"),
        "url",
    ),
    (
        "rabbitmq",
        "url_password",
        "RABBITMQ_URL",
        lambda g: _split("amqps://worker:", g.password(), "@broker.internal/jobs"),
        "url",
    ),
    (
        "cloudinary",
        "url",
        "CLOUDINARY_URL",
        lambda g: _split(f"cloudinary://{g.digits(15)}:", g.r(B64U, 27), "@acme"),
        "url",
    ),
    (
        "azure",
        "storage_connection_string",
        "AZURE_STORAGE_CONNECTION_STRING",
        lambda g: _split(
            f"DefaultEndpointsProtocol=https;AccountName=acme{g.r(LOWNUM, 6)};AccountKey=",
            g.b64(64),
            ";EndpointSuffix=core.windows.net",
        ),
        "connstr",
    ),
    (
        "azure",
        "service_bus",
        "SERVICEBUS_CONNECTION",
        lambda g: _split(
            "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=",
            g.b64(32),
        ),
        "connstr",
    ),
    (
        "azure",
        "sas_url",
        "BACKUP_CONTAINER_SAS_URL",
        lambda g: _split(
            "https://acme.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&spr=https&sig=",
            g.b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
        ),
        "url",
    ),
]

PEM_FORMATS: list[tuple[str, str, str, str]] = [
    ("pem", "rsa", "RSA PRIVATE KEY", "TLS_KEY"),
    ("pem", "pkcs8", "PRIVATE KEY", "SIGNING_KEY"),
    ("pem", "ec", "EC PRIVATE KEY", "EC_KEY"),
    ("pem", "openssh", "OPENSSH PRIVATE KEY", "DEPLOY_KEY"),
    ("pem", "pgp", "PGP PRIVATE KEY BLOCK", "RELEASE_SIGNING_KEY"),
    ("google", "service_account_key", "PRIVATE KEY", "GOOGLE_SA_KEY"),
]


def _split(before: str, secret: str, after: str = "") -> tuple[str, str]:
    return before + secret + after, secret


def samples(seed: str = "codecite-secrets") -> list[Sample]:
    out: list[Sample] = []
    for provider, kind, env, make, announced in TOKEN_FORMATS:
        value = make(Gen(f"{seed}:{provider}:{kind}"))
        assert isinstance(value, str)
        out.append(Sample(provider, kind, env, value, (value,), announced))
    for provider, kind, env, make_url, shape in URL_FORMATS:
        value, secret = make_url(Gen(f"{seed}:{provider}:{kind}"))
        out.append(Sample(provider, kind, env, value, (secret,), True, shape))
    for provider, kind, label, env in PEM_FORMATS:
        pem = Gen(f"{seed}:{provider}:{kind}").pem(label)
        body = tuple(pem.split("\n")[1:-1])
        out.append(Sample(provider, kind, env, pem, body, True, "pem"))
    return out
