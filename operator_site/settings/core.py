"""Django itself: apps, middleware, templates, passwords, language and static files."""

from operator_site.settings import env
from operator_site.settings.origin import BASE_DIR, BASE_URL_HOSTNAME

# One switch for production mode: start-up refuses unsafe or missing settings (docs/deploy.md).
OPERATOR_ENV = env.env_choice("OPERATOR_ENV", "development", ("development", "production"))
PRODUCTION = OPERATOR_ENV == "production"
DEBUG = env.env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env.env_list("DJANGO_ALLOWED_HOSTS", [BASE_URL_HOSTNAME, "localhost", "127.0.0.1"])

INSTALLED_APPS = [
    # First: its `createsuperuser` (asking for the email) replaces django.contrib.auth's.
    "accounts",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "django_tasks",
    "django_tasks_db",
    "oauth2_provider",
    "operator_site",
    "audit",
    "organizations",
    "knowledge",
    "identity_providers",
    "oauth",
    "mcp_operator",
    "mcp_docs",
    "agent_auth",
    "site_pages",
    "connections",
]

MIDDLEWARE = [
    # Health probes first: no Host check, session or log for a load balancer's poll.
    "operator_site.health.HealthCheckMiddleware",
    "operator_core.request_log.RequestLogMiddleware",
    # GET /metrics, before the Host check: a scraper names an app server by its address.
    "operator_site.metrics_endpoint.MetricsEndpointMiddleware",
    # Each request's span, when tracing is on (left out of the chain when it is off).
    "operator_core.telemetry.request_spans.RequestSpanMiddleware",
    # A declared body over 1 MiB is refused here, before anything below reads it.
    "operator_site.request_refusals.RequestSizeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    # Django's own four below and the CSP, skipped on the MCP endpoints (bearer tokens, no pages).
    "operator_site.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "operator_site.middleware.AuthenticationMiddleware",
    "operator_site.middleware.MessageMiddleware",
    "operator_site.middleware.XFrameOptionsMiddleware",
    "operator_site.middleware.ContentSecurityPolicyMiddleware",
    # Last: answers what a view let escape on an API path in that path's format, never HTML 500,
    # and an outage on a page with 503 and Retry-After.
    "operator_site.middleware.ApiFailureMiddleware",
]

# Background work (the headless verification emails) is a queue in the database, run by
# `manage.py db_worker` (docs/operations.md#the-email-worker).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

ROOT_URLCONF = "operator_site.urls"
# `manage.py test`: Django's runner, with a fresh cache key prefix for every test (tests/runner.py).
TEST_RUNNER = "tests.runner.OperatorTestRunner"
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

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "oauth:sign-in"
# People sign in by email (accounts/backends.py); Django's ModelBackend otherwise.
AUTHENTICATION_BACKENDS = ["accounts.backends.EmailBackend"]
# A password reset link works once, for one hour (docs/authentication.md#forgotten-passwords).
PASSWORD_RESET_TIMEOUT = 3600

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# The headless endpoints parse and render JSON with DRF serializers only: no DRF auth.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": None,
}
