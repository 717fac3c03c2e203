"""The suite sees the documented defaults whatever the shell holds (tests/environment.py).

The check that matters runs the suite's own entry, `manage.py test`, in a
subprocess whose environment sets documented variables to values other than
their defaults, and has it run `environment_probe`, which passes only when the
settings it sees are the defaults. Without the neutralising step the probe
fails (the grace window is 0, the tool limit 1), and production mode refuses
to start at all.
"""

import os
import subprocess
import sys
from pathlib import Path

from django.test import SimpleTestCase

from tests.environment import KEPT, TEST_BASE_URL, documented_variables, neutralise_environment
from tests.operator_site.environment_probe import SHELL_VALUES

PROJECT_DIR = Path(__file__).resolve().parents[2]


class ShellEnvironmentTests(SimpleTestCase):
    def test_documented_variables_in_the_shell_do_not_reach_the_settings(self) -> None:
        run = subprocess.run(
            [sys.executable, "manage.py", "test", "tests.operator_site.environment_probe", "--noinput"],
            cwd=PROJECT_DIR,
            env={**os.environ, **SHELL_VALUES},
            capture_output=True,
            text=True,
            timeout=120,
        )

        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertIn("Ran 1 test", run.stderr)

    def test_every_documented_variable_but_the_kept_ones_is_removed(self) -> None:
        environ = {name: "not-a-default" for name in documented_variables()}
        environ |= {"PATH": "/usr/bin", "OPERATOR_REQUIRE_REAL_SERVICES": "all"}

        neutralise_environment(environ)

        self.assertEqual(set(environ), KEPT | {"PATH", "OPERATOR_REQUIRE_REAL_SERVICES", "OPERATOR_BASE_URL"})
        self.assertEqual(environ["OPERATOR_BASE_URL"], TEST_BASE_URL)

    def test_the_variables_the_probe_sets_are_documented(self) -> None:
        # Parsing docs/configuration.md is what keeps a new variable covered; it must find these.
        self.assertLessEqual(set(SHELL_VALUES) | {"DATABASE_URL", "REDIS_URL"}, documented_variables())

    def test_this_run_holds_no_documented_variable_of_the_shell(self) -> None:
        present = (documented_variables() - KEPT - {"OPERATOR_BASE_URL"}) & set(os.environ)

        self.assertEqual(present, set())
        self.assertEqual(os.environ["OPERATOR_BASE_URL"], TEST_BASE_URL)
