"""Run only by `test_suite_environment` in a `manage.py test` of its own: its name is outside the discovery pattern.

It passes only when the settings are the documented defaults, although that
run's environment sets the variables of `SHELL_VALUES` to other values.
"""

from django.conf import settings
from django.test import SimpleTestCase

from tests.environment import TEST_BASE_URL

# Each a documented variable (docs/configuration.md) at a value other than its default.
SHELL_VALUES = {
    "OPERATOR_REFRESH_TOKEN_GRACE_SECONDS": "0",
    "OPERATOR_TOOL_CALLS_PER_MINUTE": "1",
    "OPERATOR_CLIENT_REGISTRATION": "closed",
    "OPERATOR_TRUSTED_PROXIES": "2",
    "DJANGO_DEBUG": "true",
    "LOG_FORMAT": "json",
    "OPERATOR_ENV": "production",
    "OPERATOR_BASE_URL": "https://operator.example.com",
}


class ShellVariablesProbe(SimpleTestCase):
    def test_the_settings_are_the_documented_defaults(self) -> None:
        operator = settings.OPERATOR
        self.assertEqual(operator["refresh_token_grace_seconds"], 60)
        self.assertEqual(operator["tool_calls_per_minute"], 120)
        self.assertEqual(operator["client_registration"], "open")
        self.assertEqual(operator["trusted_proxies"], 0)
        self.assertFalse(settings.DEBUG)
        self.assertEqual(operator["issuer"], f"{TEST_BASE_URL}/api/auth")
