"""Logging: one console handler, text or JSON (`LOG_FORMAT`); noisy libraries quieted.

With `LOG_FORMAT=json` every request also writes one structured record on
`operator.requests` (operator_core.request_log); in text mode that record is
left to the server's own access log.
"""

from operator_site.settings import env

LOG_FORMAT = env.env_choice("LOG_FORMAT", "text", ("text", "json"))
LOG_LEVEL = env.env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
_NEVER_DEBUG = "INFO" if LOG_LEVEL == "DEBUG" else LOG_LEVEL
_formatter = {"()": "operator_core.log_format.JsonLogFormatter"} if LOG_FORMAT == "json" else {}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"default": _formatter} if _formatter else {},
    "handlers": {"console": {"class": "logging.StreamHandler", **({"formatter": "default"} if _formatter else {})}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # httpx logs every request line at INFO; the SDK and CIMD fetcher use it.
        "httpx": {"level": "WARNING"},
        # Two lines per email attempt at INFO; agent_auth.outbox logs what went wrong itself.
        "django_tasks": {"level": "WARNING"},
        "operator.requests": {"level": "INFO" if LOG_FORMAT == "json" else "WARNING"},
        # Security events (docs/operations.md, "Logs"): kept whatever LOG_LEVEL says.
        "operator.audit": {"level": "INFO"},
        # At DEBUG both print codes, tokens and redirect URLs carrying codes: never below INFO,
        # whatever LOG_LEVEL says.
        "oauthlib": {"level": _NEVER_DEBUG},
        "oauth2_provider": {"level": _NEVER_DEBUG},
    },
}
