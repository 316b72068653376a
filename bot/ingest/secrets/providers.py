"""Provider token formats: tokens that announce themselves, found wherever they appear.

Each rule is written from the provider's documented token format (prefix,
length, alphabet). A match is redacted in an assignment, an argument, a
header, a command line, prose or a path alike. Publishable keys and public
ids (Stripe `pk_`, Mapbox `pk.`, PostHog `phc_`, Google OAuth client ids,
Twilio account SIDs) are deliberately absent: they are meant to be shipped.
"""

from __future__ import annotations

import base64
import binascii
import re

from bot.ingest.secrets.rules import TokenRule
from bot.ingest.secrets.values import has_placeholder_body

B62 = "A-Za-z0-9"
B64U = "A-Za-z0-9_\\-"
B64 = "A-Za-z0-9+/"
HEX = "0-9a-f"
UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
END = "(?![A-Za-z0-9_])"  # a fixed-length body ends at a non-token character


def real(value: str) -> bool:
    return not has_placeholder_body(value)


def token_real(value: str) -> bool:
    """A webhook path: placeholder ids (`T00000000/B00000000`, as Slack's docs write them)
    before a generated token are still its credential; only the token decides."""
    return real(value.rstrip("/").rsplit("/", 1)[-1])


def mixed(value: str) -> bool:
    """A random base62 body, not a hex digest (`icon.ico-<md5>.png` is an asset's name)."""
    return real(value) and not re.fullmatch(r"[\w-]*?[0-9a-f]{32}", value)


def pem_in_base64(value: str) -> bool:
    """kubeconfig `client-key-data`: base64 of a PEM block, secret only if it is a private key."""
    head = value[:96]
    try:
        raw = base64.b64decode(head[: len(head) - len(head) % 4])
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in raw


def _r(provider: str, kind: str, trigger: str, body: str, **kw: object) -> TokenRule:
    """A rule whose match is `trigger` + `body`; placeholder bodies are never redacted."""
    kw.setdefault("check", real)
    return TokenRule(provider, kind, trigger, _escape(trigger) + body, **kw)  # type: ignore[arg-type]


def _escape(literal: str) -> str:
    return "".join("\\" + c if c in ".$|()[]{}*+?^\\" else c for c in literal)


RULES: tuple[TokenRule, ...] = (
    # --- source hosting and package registries
    *(
        _r("github", "github_token", p, f"[{B62}]{{36}}{END}")
        for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    ),
    _r("github", "github_fine_grained_pat", "github_pat_", f"[{B62}]{{22}}_[{B62}]{{59}}{END}"),
    *(
        _r("gitlab", f"gitlab_{p.rstrip('-')}", p, f"[{B64U}.]{{20,}}")
        for p in (
            "glpat-",
            "gloas-",
            "glrt-",
            "gldt-",
            "glft-",
            "glimt-",
            "glcbt-",
            "glagent-",
            "glsoat-",
            "glffct-",
        )
    ),
    _r("gitlab", "gitlab_pipeline_trigger", "glptt-", f"[{HEX}]{{40}}{END}"),
    _r("gitlab", "gitlab_runner_registration", "GR1348941", f"[{B64U}]{{20,}}"),
    _r("bitbucket", "bitbucket_app_password", "ATBB", f"[{B62}]{{32,}}{END}"),
    _r("atlassian", "atlassian_api_token", "ATATT3", f"[{B64U}=]{{150,}}"),
    _r("atlassian", "atlassian_admin_key", "ATCTT3", f"[{B64U}=]{{150,}}"),
    _r("npm", "npm_token", "npm_", f"[{B62}]{{36}}{END}"),
    _r("pypi", "pypi_token", "pypi-AgEIcHlwaS5vcmc", f"[{B64U}]{{50,}}"),
    _r("pypi", "testpypi_token", "pypi-AgENdGVzdC5weXBpLm9yZw", f"[{B64U}]{{50,}}"),
    _r("nuget", "nuget_api_key", "oy2", f"[a-z0-9]{{43}}{END}"),
    _r("rubygems", "rubygems_api_key", "rubygems_", f"[{HEX}]{{48}}{END}"),
    _r("clojars", "clojars_token", "CLOJARS_", f"[a-z0-9]{{60}}{END}"),
    _r("jfrog", "jfrog_api_key", "AKCp", f"[{B62}]{{69}}{END}"),
    _r("jfrog", "jfrog_reference_token", "cmVmdGtuOjAxOj", f"[{B62}]{{40,}}"),
    _r("docker", "docker_hub_token", "dckr_pat_", f"[{B64U}]{{27,}}"),
    _r("docker", "docker_org_token", "dckr_oat_", f"[{B64U}]{{27,}}"),
    _r(
        "sourcegraph",
        "sourcegraph_token",
        "sgp_",
        f"(?:local_|[0-9a-fA-F]{{16}}_)?[0-9a-fA-F]{{40}}{END}",
    ),
    _r("sonarqube", "sonarqube_token", "squ_", f"[{HEX}]{{40}}{END}"),
    _r("sonarqube", "sonarqube_project_token", "sqp_", f"[{HEX}]{{40}}{END}"),
    _r("sonarqube", "sonarqube_analysis_token", "sqa_", f"[{HEX}]{{40}}{END}"),
    _r("buildkite", "buildkite_token", "bkua_", f"[{HEX}]{{40}}{END}"),
    _r("circleci", "circleci_personal_token", "CCIPAT_", f"[{B62}]{{22}}_[{HEX}]{{40}}{END}"),
    _r("circleci", "circleci_project_token", "CCIPRJ_", f"[{B62}]{{22}}_[{HEX}]{{40}}{END}"),
    _r("readme", "readme_api_key", "rdme_", f"[a-z0-9]{{70}}{END}"),
    _r("postman", "postman_api_key", "PMAK-", f"[{HEX}]{{24}}-[{HEX}]{{34}}{END}"),
    _r("octopus", "octopus_api_key", "API-", f"[A-Z0-9]{{26}}{END}"),
    _r("harness", "harness_pat", "pat.", f"[{B64U}]{{22}}\\.[{HEX}]{{24}}\\.[{B62}]{{20}}{END}"),
    # --- clouds and hosting
    _r("aws", "aws_access_key", "AKIA", f"[0-9A-Z]{{16}}{END}"),
    _r("aws", "aws_session_key_id", "ASIA", f"[0-9A-Z]{{16}}{END}"),
    _r("google", "google_api_key", "AIza", f"[{B64U}]{{35}}{END}"),
    _r("google", "google_oauth_client_secret", "GOCSPX-", f"[{B64U}]{{28}}{END}"),
    _r("google", "google_oauth_access_token", "ya29.", f"[{B64U}]{{30,}}"),
    _r("google", "google_oauth_refresh_token", "1//0", f"[{B64U}]{{40,}}"),
    TokenRule(
        "firebase",
        "firebase_fcm_server_key",
        ":APA91b",
        f"AAAA[{B64U}]{{7}}:APA91b[{B64U}]{{130,}}",
        back=11,
    ),
    _r(
        "azure",
        "azure_storage_account_key",
        "AccountKey=",
        f"(?P<secret>[{B64}]{{86,88}}={{0,2}})",
        boundary=False,
    ),
    _r(
        "azure",
        "azure_shared_access_key",
        "SharedAccessKey=",
        f"(?P<secret>[{B64}]{{43,44}}={{0,1}})",
        boundary=False,
    ),
    _r("azure", "azure_sas_signature", "sig=", "(?P<secret>[A-Za-z0-9%+/=]{40,})", boundary=False),
    TokenRule(
        "azure",
        "azure_ad_client_secret",
        "Q~",
        f"[{B64U}~.]{{3}}\\dQ~[{B64U}~.]{{31,34}}{END}",
        back=4,
        check=real,
    ),
    _r("digitalocean", "digitalocean_pat", "dop_v1_", f"[{HEX}]{{64}}{END}"),
    _r("digitalocean", "digitalocean_oauth", "doo_v1_", f"[{HEX}]{{64}}{END}"),
    _r("digitalocean", "digitalocean_refresh", "dor_v1_", f"[{HEX}]{{64}}{END}"),
    _r("flyio", "flyio_macaroon", "FlyV1 fm", f"[12][ar]?_[{B64}=_,-]{{40,}}"),
    _r("flyio", "flyio_token", "fm2_", f"[{B64}=_-]{{40,}}"),
    _r("flyio", "flyio_org_token", "fo1_", f"[{B64U}]{{40,}}"),
    _r("heroku", "heroku_api_key", "HRKU-", f"[{B64U}]{{40,}}"),
    _r("cloudflare", "cloudflare_origin_ca_key", "v1.0-", f"[{HEX}]{{24}}-[{HEX}]{{146}}{END}"),
    _r("alibaba", "alibaba_access_key_id", "LTAI", f"[{B62}]{{16,24}}{END}"),
    _r("tencent", "tencent_secret_id", "AKID", f"[{B62}]{{32,36}}{END}"),
    _r("yandex", "yandex_api_key", "AQVN", f"[{B64U}]{{35,38}}{END}"),
    _r("netlify", "netlify_token", "nfp_", f"[{B62}]{{36,40}}{END}"),
    _r("render", "render_api_key", "rnd_", f"[{B62}]{{32}}{END}"),
    _r("deno", "deno_deploy_token", "ddp_", f"[{B62}]{{36}}{END}"),
    _r("deno", "deno_deploy_org_token", "ddw_", f"[{B62}]{{36}}{END}"),
    _r("supabase", "supabase_access_token", "sbp_", f"[{HEX}]{{40}}{END}"),
    _r("supabase", "supabase_secret_key", "sb_secret_", f"[{B64U}]{{31,}}"),
    _r("planetscale", "planetscale_token", "pscale_", f"(?:tkn|pw|oauth)_[{B64U}.=]{{32,64}}"),
    _r(
        "tailscale",
        "tailscale_key",
        "tskey-",
        f"(?:api|auth|client|scim|webhook)-[{B62}]{{10,}}-[{B62}]{{20,}}",
    ),
    _r("databricks", "databricks_token", "dapi", f"[{HEX}]{{32}}(?:-\\d)?{END}"),
    _r("databricks", "databricks_oauth_secret", "dose", f"[{HEX}]{{32}}{END}"),
    _r("dynatrace", "dynatrace_token", "dt0c01.", f"[A-Z0-9]{{24}}\\.[A-Z0-9]{{64}}{END}"),
    _r("pulumi", "pulumi_token", "pul-", f"[{HEX}]{{40}}{END}"),
    TokenRule(
        "terraform",
        "terraform_cloud_token",
        ".atlasv1.",
        f"[{B62}]{{14}}\\.atlasv1\\.[{B64U}=]{{60,70}}",
        back=14,
        check=real,
    ),
    _r("vault", "vault_service_token", "hvs.", f"[{B64U}]{{24,}}"),
    _r("vault", "vault_batch_token", "hvb.", f"[{B64U}]{{24,}}"),
    _r("vault", "vault_recovery_token", "hvr.", f"[{B64U}]{{24,}}"),
    _r(
        "doppler",
        "doppler_token",
        "dp.",
        f"(?:st|pt|ct|sa|scim|audit)\\.(?:[a-z0-9_-]{{2,35}}\\.)?[{B62}]{{40,44}}{END}",
    ),
    _r("onepassword", "onepassword_service_account", "ops_eyJ", f"[{B64U}=]{{100,}}"),
    _r(
        "onepassword",
        "onepassword_secret_key",
        "A3-",
        "[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}" + END,
    ),
    _r("infracost", "infracost_api_key", "ico-", f"[{B62}]{{32}}{END}", check=mixed),
    _r(
        "kubernetes",
        "kubeconfig_client_key_data",
        "LS0tLS1CRUdJTi",
        f"[{B64}]{{40,}}={{0,2}}",
        check=pem_in_base64,
    ),
    # --- AI and data services
    _r("anthropic", "anthropic_key", "sk-ant-", f"[a-z]{{3,5}}\\d{{2}}-[{B64U}]{{80,}}"),
    _r("openai", "openai_project_key", "sk-proj-", f"[{B64U}]{{40,}}"),
    _r("openai", "openai_service_key", "sk-svcacct-", f"[{B64U}]{{40,}}"),
    _r("openai", "openai_admin_key", "sk-admin-", f"[{B64U}]{{40,}}"),
    _r(
        "openai",
        "openai_key",
        "sk-",
        f"[{B62}]{{20}}T3BlbkFJ[{B62}]{{20}}{END}|sk-[{B62}]{{48}}{END}",
    ),
    _r("openrouter", "openrouter_key", "sk-or-v1-", f"[{HEX}]{{64}}{END}"),
    _r("huggingface", "huggingface_token", "hf_", f"[A-Za-z]{{34}}{END}"),
    _r("huggingface", "huggingface_org_token", "api_org_", f"[A-Za-z]{{34}}{END}"),
    _r("replicate", "replicate_token", "r8_", f"[{B62}]{{37}}{END}"),
    _r("groq", "groq_key", "gsk_", f"[{B62}]{{52}}{END}"),
    _r("xai", "xai_key", "xai-", f"[{B62}]{{80}}{END}"),
    _r("perplexity", "perplexity_key", "pplx-", f"[{B62}]{{48}}{END}"),
    _r("cerebras", "cerebras_key", "csk-", f"[a-z0-9]{{48}}{END}"),
    _r("langsmith", "langsmith_key", "lsv2_", f"(?:pt|sk)_[{HEX}]{{32}}_[{HEX}]{{10}}{END}"),
    _r("together", "together_key", "tgp_v1_", f"[{B64U}]{{43}}{END}"),
    _r("pinecone", "pinecone_key", "pcsk_", f"[{B62}]{{5,6}}_[{B62}]{{60,70}}{END}"),
    _r("posthog", "posthog_personal_key", "phx_", f"[{B62}]{{40,}}{END}"),
    _r("grafana", "grafana_cloud_token", "glc_", f"[{B64}=_-]{{32,400}}"),
    _r("grafana", "grafana_service_account", "glsa_", f"[{B62}]{{32}}_[{HEX}]{{8}}{END}"),
    _r("grafana", "grafana_api_key", "eyJrIjoi", f"[{B64}=]{{40,}}"),
    _r("newrelic", "newrelic_user_key", "NRAK-", f"[A-Z0-9]{{27}}{END}"),
    _r("newrelic", "newrelic_insights_key", "NRII-", f"[{B64U}]{{32}}{END}"),
    _r("newrelic", "newrelic_admin_key", "NRAA-", f"[{HEX}]{{27}}{END}"),
    _r("newrelic", "newrelic_browser_key", "NRJS-", f"[{HEX}]{{19}}{END}"),
    TokenRule(
        "newrelic", "newrelic_license_key", "NRAL", f"[{HEX}]{{36}}NRAL{END}", back=36, check=real
    ),
    _r("sentry", "sentry_org_token", "sntrys_", f"eyJ[{B64}=]{{20,}}_[{B64U}]{{43}}"),
    _r("sentry", "sentry_user_token", "sntryu_", f"[{HEX}]{{64}}{END}"),
    _r(
        "sentry",
        "sentry_dsn",
        "://",
        f"(?P<secret>[{HEX}]{{32}})@[\\w.-]*sentry[\\w.-]*/\\d+",
        boundary=False,
    ),
    # --- messaging, mail and collaboration
    _r("slack", "slack_token", "xox", f"[abposr]-(?:\\d+-)+[{B62}-]{{10,250}}"),
    _r("slack", "slack_config_token", "xoxe.xox", f"[bp]-\\d-[{B62}-]{{20,250}}"),
    _r("slack", "slack_refresh_token", "xoxe-", f"\\d-[{B62}-]{{20,250}}"),
    _r("slack", "slack_app_token", "xapp-", f"\\d-[A-Z0-9]+-\\d+-[{B62}]{{10,250}}"),
    _r(
        "slack",
        "slack_webhook",
        "hooks.slack.com/",
        "(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})",
        boundary=False,
        check=token_real,
    ),
    _r(
        "discord",
        "discord_webhook",
        "/api/webhooks/",
        f"(?P<secret>\\d{{17,20}}/[{B64U}]{{60,}})",
        boundary=False,
    ),
    _r(
        "teams",
        "teams_webhook",
        "webhook.office.com/",
        "webhook(?:b2)?/(?P<secret>[^\\s'\"<>\\])]{40,})",
        boundary=False,
    ),
    _r(
        "zapier",
        "zapier_webhook",
        "hooks.zapier.com/",
        "hooks/catch/(?P<secret>\\d+/[A-Za-z0-9]+)/?",
        boundary=False,
    ),
    TokenRule(
        "telegram",
        "telegram_bot_token",
        ":AA",
        # `https://api.telegram.org/bot<token>/sendMessage`: the token follows a word
        f"(?:(?<=/bot)|(?<![A-Za-z0-9_]))\\d{{8,10}}:AA[{B64U}]{{33}}{END}",
        back=10,
        boundary=False,
        check=real,
    ),
    _r("twilio", "twilio_api_key", "SK", f"[0-9a-fA-F]{{32}}{END}"),
    _r("sendgrid", "sendgrid_key", "SG.", f"[{B64U}]{{22}}\\.[{B64U}]{{43}}{END}"),
    _r("mailgun", "mailgun_key", "key-", f"[{HEX}]{{32}}{END}"),
    TokenRule(
        "mailchimp", "mailchimp_key", "-us", f"[{HEX}]{{32}}-us\\d{{1,2}}{END}", back=32, check=real
    ),
    _r("brevo", "brevo_key", "xkeysib-", f"[{HEX}]{{64}}-[{B62}]{{16}}{END}"),
    _r("brevo", "brevo_smtp_key", "xsmtpsib-", f"[{HEX}]{{64}}-[{B62}]{{16}}{END}"),
    _r("notion", "notion_integration_secret", "secret_", f"[{B62}]{{43}}{END}"),
    _r("notion", "notion_token", "ntn_", f"[{B62}]{{46}}{END}"),
    _r("linear", "linear_api_key", "lin_api_", f"[{B62}]{{40}}{END}"),
    _r("linear", "linear_oauth_token", "lin_oauth_", f"[{HEX}]{{64}}{END}"),
    TokenRule(
        "asana",
        "asana_pat",
        "/1",
        f"[12]/1\\d{{12,16}}(?:/1\\d{{12,16}})?:[{HEX}]{{32}}{END}",
        back=1,
        check=real,
    ),
    _r("figma", "figma_token", "figd_", f"[{B64U}]{{40}}{END}"),
    _r("frameio", "frameio_token", "fio-u-", f"[{B64U}]{{64}}{END}"),
    _r("airtable", "airtable_pat", "pat", f"[{B62}]{{14}}\\.[{HEX}]{{64}}{END}", alone=True),
    _r("typeform", "typeform_token", "tfp_", f"[{B64U}.=]{{59}}"),
    _r("dropbox", "dropbox_short_lived_token", "sl.", f"[{B64U}=]{{130,}}", alone=True),
    _r("contentful", "contentful_token", "CFPAT-", f"[{B64U}]{{43}}{END}"),
    _r("hubspot", "hubspot_private_app", "pat-", f"(?:na|eu|ap)\\d-{UUID}{END}"),
    _r("intercom", "intercom_token", "dG9rOj", f"[{B64}=]{{40,}}"),
    _r("clickup", "clickup_token", "pk_", f"\\d{{6,10}}_[A-Z0-9]{{32}}{END}"),
    _r("beamer", "beamer_key", "b_", f"[{B64U}=]{{44}}{END}", alone=True),
    _r("launchdarkly", "launchdarkly_api_key", "api-", f"{UUID}{END}"),
    _r("launchdarkly", "launchdarkly_sdk_key", "sdk-", f"{UUID}{END}"),
    _r("scalingo", "scalingo_token", "tk-us-", f"[{B64U}]{{48}}{END}"),
    _r("adafruit", "adafruit_io_key", "aio_", f"[{B62}]{{28}}{END}"),
    _r("prefect", "prefect_api_key", "pnu_", f"[{B62}]{{36}}{END}"),
    _r("mapbox", "mapbox_secret_token", "sk.eyJ", f"[{B64U}]{{20,}}\\.[{B64U}]{{20,}}"),
    _r("facebook", "facebook_access_token", "EAA", f"[A-Z]{{0,4}}[{B62}]{{100,}}{END}"),
    _r("twitter", "twitter_bearer_token", "AAAAAAAAAAAAAAAAAAAAA", f"[{B62}%]{{30,}}"),
    _r("salesforce", "salesforce_access_token", "00D", f"[{B62}]{{12,15}}![{B62}._]{{80,}}"),
    # --- payments and commerce
    _r("stripe", "stripe_secret_key", "sk_", f"(?:live|test)_[{B62}]{{24,99}}{END}"),
    _r("stripe", "stripe_restricted_key", "rk_", f"(?:live|test)_[{B62}]{{24,99}}{END}"),
    _r("stripe", "stripe_webhook_secret", "whsec_", f"[{B62}]{{32,}}{END}"),
    _r("square", "square_access_token", "EAAA", f"[{B64U}]{{60}}{END}"),
    _r("square", "square_oauth_token", "sq0atp-", f"[{B64U}]{{22}}{END}"),
    _r("square", "square_oauth_secret", "sq0csp-", f"[{B64U}]{{43}}{END}"),
    _r(
        "braintree",
        "braintree_access_token",
        "access_token$",
        f"(?:production|sandbox)\\$[a-z0-9]{{16}}\\$[{HEX}]{{32}}{END}",
    ),
    _r("shopify", "shopify_access_token", "shpat_", f"[a-fA-F0-9]{{32}}{END}"),
    _r("shopify", "shopify_shared_secret", "shpss_", f"[a-fA-F0-9]{{32}}{END}"),
    _r("shopify", "shopify_custom_app_token", "shpca_", f"[a-fA-F0-9]{{32}}{END}"),
    _r("shopify", "shopify_private_app_token", "shppa_", f"[a-fA-F0-9]{{32}}{END}"),
    _r("easypost", "easypost_api_key", "EZAK", f"[{B62}]{{54}}{END}"),
    _r("easypost", "easypost_test_key", "EZTK", f"[{B62}]{{54}}{END}"),
    _r("shippo", "shippo_token", "shippo_", f"(?:live|test)_[{HEX}]{{40}}{END}"),
    _r("duffel", "duffel_token", "duffel_", f"(?:test|live)_[{B64U}=]{{43}}{END}"),
    _r("flutterwave", "flutterwave_secret_key", "FLWSECK", f"(?:_TEST)?-[{HEX}]{{32}}-X{END}"),
    _r("gocardless", "gocardless_token", "live_", f"[{B64U}=]{{40}}{END}"),
    _r("lob", "lob_test_key", "test_", f"[{HEX}]{{35}}{END}", alone=True),
    _r("lob", "lob_live_key", "live_", f"[{HEX}]{{35}}{END}"),
    _r("plaid", "plaid_access_token", "access-", f"(?:sandbox|development|production)-{UUID}{END}"),
    # --- keys and credential shapes that belong to no one provider
    _r(
        "age",
        "age_secret_key",
        "AGE-SECRET-KEY-1",
        f"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{{58}}{END}",
    ),
    # A bot token's first part is the bot's numeric id in base64: "1..." is "MT...", "9..." "OT...".
    *(
        _r(
            "discord",
            "discord_bot_token",
            lead,
            f"[{B64U}]{{22,24}}\\.[{B64U}]{{6}}\\.[{B64U}]{{27,38}}{END}",
        )
        for lead in ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT")
    ),
    _r("jwt", "jwt", "eyJ", f"[{B64U}]{{8,}}\\.eyJ[{B64U}]{{8,}}\\.(?:[{B64U}]{{8,}})?"),
)
