"""Logging: one console handler; noisy libraries quieted."""

from operator_site.settings import env

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request line at INFO; the SDK and CIMD fetcher use it.
    "loggers": {"django.request": {"level": "ERROR"}, "httpx": {"level": "WARNING"}},
}
