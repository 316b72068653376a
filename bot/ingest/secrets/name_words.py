"""The words of a name that decide whether it names a secret (`bot.ingest.secrets.keywords`):
`API_KEY`, `client_secret` and `app_certificate` do; `TOKEN_URL`, `cache_key` and `public_key`
do not. Kept apart from the scan so the vocabulary reads as one list.
"""

NOT_THE_SECRET = frozenset(
    """url uri urls endpoint endpoints path paths file files filename dir directory template
    templates header headers name names id ids type types length len size prefix suffix env var
    vars variable field fields param params kind format pattern regex re label labels ttl expiry
    expires expiration lifetime timeout version count mode scheme algorithm alg hint policy
    provider store cache ref mount location host port user username email enabled enable disabled
    required min max rotation reset question validator validation class cls model manager service
    storage backend backends handler factory getter method fn func callback source description desc
    help message msg text title placeholder key keys column table attr attribute arn scope scopes
    audience issuer limit budget hasher hashers strength chars policy display form input widget
    view views page route routes label error errors prompt length_min length_max sort index
    exchange request response client parser serializer schema flow grant grants""".split()
)
PUBLIC = frozenset({"public", "publishable", "pub", "nonsecret"})
SECRET_ENDINGS = (
    "token", "secret", "apikey", "accesskey", "secretkey", "credential", "credentials", "salt",
)  # fmt: skip
STRONG_KEY_OWNERS = frozenset(
    """api access secret private signing sign master account encryption encrypt license licence app
    admin auth client sdk service write read ingest server subscription storage shared consumer
    webhook hmac session jwt deploy""".split()
)
WEAK_KEY_OWNERS_NOT = frozenset(
    """cache primary sort foreign dict hash partition lookup map registry config row idempotency
    object s3 redis unique composite natural surrogate group event bucket index translation i18n
    message state storage_key local token password env setting settings query field column
    metadata annotation json yaml gpg pgp ssh fingerprint commit sha checksum digest etag
    integrity revision version dedup dedupe routing_table shard""".split()
)
KEY_ABOUT = frozenset("hash sha sha1 sha256 digest fingerprint checksum last4 masked".split())
CERTIFICATE = frozenset({"certificate", "cert"})
ISSUED_CERTIFICATE = frozenset({"app", "api", "access", "account", "master", "secret"})
