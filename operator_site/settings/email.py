"""Outgoing email: SMTP when `EMAIL_HOST` is set, the console otherwise."""

from operator_site.settings import env

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
