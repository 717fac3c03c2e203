"""Outgoing email: SMTP when `EMAIL_HOST` is set, the console otherwise (development only).

Production refuses to start without `EMAIL_HOST` (settings/production.py): the
console would print verification codes into the logs. There, TLS is on unless
switched off: STARTTLS by default, or `EMAIL_USE_SSL` for implicit TLS.
"""

from django.core.exceptions import ImproperlyConfigured

from operator_site.settings import env
from operator_site.settings.core import PRODUCTION

EMAIL_HOST = env.env_str("EMAIL_HOST", "")
# EMAIL_HOST_PASSWORD, or a file named by EMAIL_HOST_PASSWORD_FILE.
EMAIL_PASSWORD = env.env_optional_secret("EMAIL_HOST_PASSWORD", path_name="EMAIL_HOST_PASSWORD_FILE")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env.env_int("EMAIL_PORT", 25)
    EMAIL_HOST_USER = env.env_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = EMAIL_PASSWORD.value
    EMAIL_USE_SSL = env.env_bool("EMAIL_USE_SSL", False)
    EMAIL_USE_TLS = env.env_bool("EMAIL_USE_TLS", PRODUCTION and not EMAIL_USE_SSL)
    if EMAIL_USE_TLS and EMAIL_USE_SSL:
        raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL: set one of them, not both")
    EMAIL_TIMEOUT = 10
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env.env_str("DEFAULT_FROM_EMAIL", "Service Operator <no-reply@operator.invalid>")
