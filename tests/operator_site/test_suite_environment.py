"""The suite sees the documented defaults whatever the shell holds (tests/environment.py).

The check that matters runs the suite's own entry, `manage.py test`, in a
subprocess whose environment sets documented variables to values other than
their defaults, and has it run `ShellVariablesProbe`: the probe passes only
when the settings it sees are the defaults. Without the neutralising step the
probe fails (the grace window is 0, the tool limit 1), and production mode
refuses to start at all.
"""

import os
import subprocess
import sys
import unittest
from pathlib import Path

from django.conf import settings
from django.test import SimpleTestCase

from tests.environment import KEPT, TEST_BASE_URL, documented_variables, neutralise_environment

PROJECT_DIR = Path(__file__).resolve().parents[2]
# Set only for the subprocess below: the probe is not a test of the suite itself.
PROBE_VARIABLE = "OPERATOR_TEST_ENVIRONMENT_PROBE"
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


@unittest.skipUnless(os.environ.get(PROBE_VARIABLE), "run by ShellEnvironmentTests in a subprocess")
class ShellVariablesProbe(SimpleTestCase):
    def test_the_settings_are_the_documented_defaults(self) -> None:
        operator = settings.OPERATOR
        self.assertEqual(operator["refresh_token_grace_seconds"], 60)
        self.assertEqual(operator["tool_calls_per_minute"], 120)
        self.assertEqual(operator["client_registration"], "open")
        self.assertEqual(operator["trusted_proxies"], 0)
        self.assertFalse(settings.DEBUG)
        self.assertEqual(operator["issuer"], f"{TEST_BASE_URL}/api/auth")


class ShellEnvironmentTests(SimpleTestCase):
    def test_documented_variables_in_the_shell_do_not_reach_the_settings(self) -> None:
        environment = {**os.environ, **SHELL_VALUES, PROBE_VARIABLE: "1"}
        run = subprocess.run(
            [sys.executable, "manage.py", "test", f"{__name__}.ShellVariablesProbe", "--noinput"],
            cwd=PROJECT_DIR,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )

        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertIn("Ran 1 test", run.stderr)
        self.assertNotIn("skipped", run.stderr)

    def test_every_documented_variable_but_the_kept_ones_is_removed(self) -> None:
        environ = {name: "not-a-default" for name in documented_variables()}
        environ |= {"PATH": "/usr/bin", "OPERATOR_REQUIRE_REAL_SERVICES": "all"}

        neutralise_environment(environ)

        self.assertEqual(set(environ), KEPT | {"PATH", "OPERATOR_REQUIRE_REAL_SERVICES", "OPERATOR_BASE_URL"})
        self.assertEqual(environ["OPERATOR_BASE_URL"], TEST_BASE_URL)

    def test_the_variables_the_issue_named_are_documented(self) -> None:
        # Parsing docs/configuration.md is what keeps a new variable covered; it must find them.
        self.assertLessEqual(set(SHELL_VALUES) | {"DATABASE_URL", "REDIS_URL"}, documented_variables())

    def test_this_suite_runs_without_a_documented_variable_of_the_shell(self) -> None:
        present = (documented_variables() - KEPT - {"OPERATOR_BASE_URL"}) & set(os.environ)

        self.assertEqual(present, set())
        self.assertEqual(os.environ["OPERATOR_BASE_URL"], TEST_BASE_URL)
