"""Settings for Service Operator, read from the environment (12-factor).

The environment is read here and nowhere else (code style §4). Defaults make
`make run` work with no environment at all; docs/configuration.md lists every
variable. App code reads our own values through `operator_core.conf`.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from operator_core.signing_keys import load_or_create_private_key
from operator_site import env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env.env_str("OPERATOR_VAR_DIR", str(BASE_DIR / "var")))
DOCS_DIR = BASE_DIR / "docs"

DEBUG = env.env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env.env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env.env_bool("OPERATOR_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set")
    # Development and tests only: production sets DJANGO_SECRET_KEY (docs/configuration.md).
    SECRET_KEY = "insecure-development-key-set-DJANGO_SECRET_KEY-in-production"

# The canonical public address of the service; never derived from the Host header.
BASE_URL = env.env_str("OPERATOR_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
_base = urlsplit(BASE_URL)
if _base.scheme not in ("http", "https") or not _base.netloc or _base.path:
    raise ImproperlyConfigured("OPERATOR_BASE_URL must be an origin such as https://operator.example")
ISSUER = f"{BASE_URL}/api/auth"
OPERATOR_ENDPOINT_URL = f"{BASE_URL}/api/mcp/operator"

ALLOWED_HOSTS = env.env_list("DJANGO_ALLOWED_HOSTS", [_base.hostname or "127.0.0.1", "localhost", "127.0.0.1"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "oauth2_provider",
    "operator_site",
    "organizations",
    "oauth",
    "mcp_operator",
    "mcp_docs",
    "agent_auth",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "operator_site.urls"
WSGI_APPLICATION = "operator_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env.env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'operator.sqlite3'}"),
        conn_max_age=env.env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # WAL lets reads proceed while a write is in flight; IMMEDIATE takes the write
    # lock when a transaction begins, so concurrent writers wait out the busy
    # timeout instead of failing at once with "database is locked" on upgrade.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL;",
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Tests get a file database like production's, not Django's shared-cache
    # in-memory one, which answers "table is locked" at once instead of waiting
    # out the busy timeout when real threads or live servers write together.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The embedded default serves one process, so a per-process cache is exact there.
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]
RATELIMIT_VIEW = None

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "oauth:sign-in"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# Security headers and cookies (manage.py check --deploy).
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
_https = _base.scheme == "https"
SESSION_COOKIE_SECURE = _https
CSRF_COOKIE_SECURE = _https
CSRF_TRUSTED_ORIGINS = [BASE_URL]
SECURE_SSL_REDIRECT = env.env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env.env_int("DJANGO_SECURE_HSTS_SECONDS", 31536000 if _https else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = _https
SECURE_HSTS_PRELOAD = _https
# Number of reverse proxies in front of the service whose X-Forwarded-* we trust (0: none).
OPERATOR_TRUSTED_PROXIES = env.env_int("OPERATOR_TRUSTED_PROXIES", 0)
if OPERATOR_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Email: SMTP when EMAIL_HOST is set, the console otherwise.
EMAIL_HOST = env.env_str("EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env.env_int("EMAIL_PORT", 25)
    EMAIL_HOST_USER = env.env_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env.env_str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env.env_bool("EMAIL_USE_TLS", False)
    EMAIL_TIMEOUT = 10
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env.env_str("DEFAULT_FROM_EMAIL", "Service Operator <no-reply@operator.invalid>")

# CORS (never with credentials) covers what browser-based MCP clients fetch
# cross-origin: the MCP endpoints, discovery documents, and the OAuth endpoints
# a client calls itself. The authorize page is a top-level navigation: no CORS.
CORS_URLS_REGEX = (
    r"^/(api/mcp/|\.well-known/|api/auth/\.well-known/"
    r"|api/auth/(oauth2/(register|token|revoke|userinfo)|jwks)$)"
)
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_HEADERS = [
    "authorization",
    "content-type",
    "accept",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "last-event-id",
]
CORS_EXPOSE_HEADERS = ["WWW-Authenticate"]
CORS_ALLOW_METHODS = ["GET", "POST", "DELETE", "OPTIONS"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": None,
}

SCOPE_OPERATOR_READ = "mcp:operator.read"
SCOPE_OPERATOR_WRITE = "mcp:operator.write"
ACCESS_TOKEN_LIFETIME_SECONDS = 3600
REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600

OPERATOR_SIGNING_KEY_PATH = Path(env.env_str("OPERATOR_SIGNING_KEY_PATH", str(VAR_DIR / "oauth-signing-key.pem")))
OPERATOR_LTI_KEY_PATH = Path(env.env_str("OPERATOR_LTI_KEY_PATH", str(VAR_DIR / "lti-signing-key.pem")))
_signing_key = load_or_create_private_key(OPERATOR_SIGNING_KEY_PATH)
_inactive_keys = []
for _retired_path in env.env_list("OPERATOR_INACTIVE_SIGNING_KEY_PATHS", []):
    # A retired key must exist: generating one would verify nothing and hide a typo.
    if not Path(_retired_path).is_file():
        raise ImproperlyConfigured(f"OPERATOR_INACTIVE_SIGNING_KEY_PATHS names a missing file: {_retired_path}")
    _inactive_keys.append(Path(_retired_path).read_text())

# Our own settings, read by app code through operator_core.conf.operator_settings().
OPERATOR = {
    "base_url": BASE_URL,
    "issuer": ISSUER,
    "operator_endpoint_url": OPERATOR_ENDPOINT_URL,
    "docs_dir": str(DOCS_DIR),
    "access_token_lifetime_seconds": ACCESS_TOKEN_LIFETIME_SECONDS,
    "refresh_token_lifetime_seconds": REFRESH_TOKEN_LIFETIME_SECONDS,
    "headless_token_lifetime_seconds": 7 * 24 * 3600,
    "headless_code_lifetime_seconds": 600,
    "headless_claim_attempts": 5,
    "idempotency_retention_seconds": 24 * 3600,
    "headless_registrations_per_hour": env.env_int("OPERATOR_HEADLESS_REGISTRATIONS_PER_HOUR", 60),
    "headless_completions_per_hour": env.env_int("OPERATOR_HEADLESS_COMPLETIONS_PER_HOUR", 30),
    "tool_calls_per_minute": env.env_int("OPERATOR_TOOL_CALLS_PER_MINUTE", 120),
    "tool_concurrency": env.env_int("OPERATOR_TOOL_CONCURRENCY", 4),
    "docs_calls_per_minute": env.env_int("OPERATOR_DOCS_CALLS_PER_MINUTE", 300),
    "sign_in_attempts_per_minute": env.env_int("OPERATOR_SIGN_IN_ATTEMPTS_PER_MINUTE", 10),
    "trusted_proxies": OPERATOR_TRUSTED_PROXIES,
    "max_request_bytes": 1024 * 1024,
    # Served protocol revisions, newest first. A revision announced for removal
    # gets "deprecated_at" and "sunset_at" (ISO 8601 UTC); contract §9.
    "protocol_revisions": [{"version": "2026-07-28", "deprecated_at": None, "sunset_at": None}],
    "deprecation_policy_url": f"{BASE_URL}/docs/versioning",
    "server_version": "1.0.0",
}

# Swapped from the first migration (docs: dot-notes). All five together.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth.Grant"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth.AccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth.RefreshToken"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth.IDToken"

OAUTH2_PROVIDER = {
    "SCOPES": {
        SCOPE_OPERATOR_READ: "Read your organization's modules and knowledge sources",
        SCOPE_OPERATOR_WRITE: "Same read access (accepted for compatibility; no tool writes)",
        "openid": "Confirm your identity",
        "profile": "See your name",
        "email": "See your email address",
        "offline_access": "Stay connected (refresh tokens, 30 days)",
    },
    "DEFAULT_SCOPES": [SCOPE_OPERATOR_READ],
    "ACCESS_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_LIFETIME_SECONDS,
    "ID_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_LIFETIME_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": REFRESH_TOKEN_LIFETIME_SECONDS,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ACCESS_TOKEN_GENERATOR": "oauth.tokens.generate_access_token",
    "REFRESH_TOKEN_GENERATOR": "oauthlib.oauth2.rfc6749.tokens.random_token_generator",
    "OAUTH2_VALIDATOR_CLASS": "oauth.validators.OperatorOAuth2Validator",
    "PKCE_REQUIRED": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # RFC 9700 §4: only SHA-256 checksums of access (JWT) and refresh tokens are stored.
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _signing_key,
    "OIDC_RSA_PRIVATE_KEYS_INACTIVE": _inactive_keys,
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_USERINFO_ENDPOINT": f"{ISSUER}/oauth2/userinfo",
    "OIDC_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "OIDC_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": OPERATOR_ENDPOINT_URL,
    "OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS": [ISSUER],
    "OAUTH2_PROTECTED_RESOURCE_BEARER_METHODS_SUPPORTED": ["header"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Service Operator",
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # Only https by default; each Application widens this to loopback http and a
    # native client's own private-use schemes, after oauth/redirect_uris.py checked them.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https"],
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    "REQUEST_APPROVAL_PROMPT": "force",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request line at INFO; the SDK and CIMD fetcher use it.
    "loggers": {"django.request": {"level": "ERROR"}, "httpx": {"level": "WARNING"}},
}
