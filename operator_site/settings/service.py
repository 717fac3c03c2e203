"""Our own settings, the `OPERATOR` dict, read by app code through `operator_core.conf.operator_settings()`.

Lifetimes declared here are also the ones the OAuth settings hand to
django-oauth-toolkit, so each is declared once.
"""

from operator_site.settings import env
from operator_site.settings.metrics import METRICS_MULTIPROCESS_DIR, METRICS_OTLP, METRICS_TOKEN
from operator_site.settings.origin import BASE_URL, DOCS_DIR, ISSUER, OPERATOR_ENDPOINT_URL
from operator_site.settings.security import OPERATOR_PROXY_ADDRESSES, OPERATOR_TRUSTED_PROXIES

ACCESS_TOKEN_LIFETIME_SECONDS = 3600
REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600
# How long a rotated refresh token may be presented again for the same answer
# (docs/authentication.md#the-grace-window); 0 is strict single use.
REFRESH_TOKEN_GRACE_SECONDS = env.env_int_between("OPERATOR_REFRESH_TOKEN_GRACE_SECONDS", 60, minimum=0, maximum=300)

# The largest request body the service reads (docs/limits.md#request-size). A declared
# larger one is refused unread (operator_site/request_refusals.py); Django's own bounds
# are the same, so that no form field, and no uploaded part, is read past it.
MAX_REQUEST_BYTES = 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES

OPERATOR = {
    "base_url": BASE_URL,
    "issuer": ISSUER,
    "operator_endpoint_url": OPERATOR_ENDPOINT_URL,
    "docs_dir": str(DOCS_DIR),
    "access_token_lifetime_seconds": ACCESS_TOKEN_LIFETIME_SECONDS,
    "refresh_token_lifetime_seconds": REFRESH_TOKEN_LIFETIME_SECONDS,
    "refresh_token_grace_seconds": REFRESH_TOKEN_GRACE_SECONDS,
    "headless_token_lifetime_seconds": 7 * 24 * 3600,
    "headless_code_lifetime_seconds": 600,
    "headless_claim_attempts": 5,
    "idempotency_retention_seconds": 24 * 3600,
    "headless_registrations_per_hour": env.env_int("OPERATOR_HEADLESS_REGISTRATIONS_PER_HOUR", 60),
    "headless_completions_per_hour": env.env_int("OPERATOR_HEADLESS_COMPLETIONS_PER_HOUR", 30),
    # Verification emails to one address, from any client address (agent_auth.recipient_limit).
    "headless_emails_per_recipient_per_hour": env.env_int("OPERATOR_HEADLESS_EMAILS_PER_RECIPIENT_PER_HOUR", 5),
    "tool_calls_per_minute": env.env_int("OPERATOR_TOOL_CALLS_PER_MINUTE", 120),
    "tool_concurrency": env.env_int("OPERATOR_TOOL_CONCURRENCY", 4),
    # A call's concurrency slot is a lease: one whose worker died frees after this long.
    "tool_lease_seconds": env.env_int("OPERATOR_TOOL_LEASE_SECONDS", 60),
    "docs_calls_per_minute": env.env_int("OPERATOR_DOCS_CALLS_PER_MINUTE", 300),
    "sign_in_attempts_per_minute": env.env_int("OPERATOR_SIGN_IN_ATTEMPTS_PER_MINUTE", 10),
    # The OAuth endpoints, per client IP address, and the token endpoint per client too (docs/limits.md).
    "oauth_token_requests_per_minute": env.env_int("OPERATOR_OAUTH_TOKEN_REQUESTS_PER_MINUTE", 120),
    "oauth_token_requests_per_client_per_minute": env.env_int(
        "OPERATOR_OAUTH_TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE", 600
    ),
    "oauth_authorizations_per_minute": env.env_int("OPERATOR_OAUTH_AUTHORIZATIONS_PER_MINUTE", 60),
    "oauth_revocations_per_minute": env.env_int("OPERATOR_OAUTH_REVOCATIONS_PER_MINUTE", 60),
    "oauth_registrations_per_hour": env.env_int("OPERATOR_OAUTH_REGISTRATIONS_PER_HOUR", 30),
    # Dynamic client registration: "open" (the contract, docs/authentication.md) or "closed";
    # a non-empty host list admits only redirect URIs on those hosts.
    "client_registration": env.env_choice("OPERATOR_CLIENT_REGISTRATION", "open", ("open", "closed")),
    "registration_redirect_hosts": env.env_list("OPERATOR_REGISTRATION_REDIRECT_HOSTS", []),
    # A registered client that never obtained a token is deleted this long after registering
    # (docs/limits.md#registered-clients): a client registers right before its first authorization.
    "unused_client_retention_hours": 24,
    "audit_retention_days": env.env_int("OPERATOR_AUDIT_RETENTION_DAYS", 180),
    "trusted_proxies": OPERATOR_TRUSTED_PROXIES,
    "proxy_networks": OPERATOR_PROXY_ADDRESSES,
    "max_request_bytes": MAX_REQUEST_BYTES,
    # Clock skew tolerated between app servers when checking exp, nbf and iat (docs/deploy.md).
    "token_leeway_seconds": env.env_int("OPERATOR_TOKEN_LEEWAY_SECONDS", 30),
    # Served protocol revisions, newest first. A revision announced for removal
    # gets "deprecated_at" and "sunset_at" (ISO 8601 UTC); docs/versioning.md.
    "protocol_revisions": [{"version": "2026-07-28", "deprecated_at": None, "sunset_at": None}],
    "deprecation_policy_url": f"{BASE_URL}/docs/versioning",
    "server_version": "1.0.0",
    # GET /metrics and the OTLP metric export (docs/operations.md#metrics); no token: no endpoint.
    "metrics_token": METRICS_TOKEN.value,
    "metrics_otlp": METRICS_OTLP,
    "metrics_multiprocess_dir": METRICS_MULTIPROCESS_DIR,
}
