"""Settings come from the environment, fail loudly when malformed, and pass the deploy checks."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from django.core.exceptions import ImproperlyConfigured
from django.test import SimpleTestCase

from operator_core.signing_keys import generate_fernet_key, generate_private_key_pem
from operator_site.settings import env

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
SIGNING_KEY = generate_private_key_pem()
LTI_KEY = generate_private_key_pem()
IDENTITY_PROVIDER_KEY = generate_fernet_key()


def production_environment(var_dir: str) -> dict[str, str]:
    """Every variable production mode needs, each given explicitly (nothing is read from var/)."""
    return {
        "OPERATOR_ENV": "production",
        "OPERATOR_BASE_URL": "https://operator.example.com",
        "DJANGO_SECRET_KEY": "a-long-random-production-secret-" + "x" * 40,
        "OPERATOR_SIGNING_KEY": SIGNING_KEY,
        "OPERATOR_LTI_KEY": LTI_KEY,
        "OPERATOR_IDENTITY_PROVIDER_KEY": IDENTITY_PROVIDER_KEY,
        "DATABASE_URL": "postgres://operator:secret@127.0.0.1:5432/operator",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "OPERATOR_VAR_DIR": var_dir,
        "OPERATOR_TRUSTED_PROXIES": "1",
        "DJANGO_SECURE_SSL_REDIRECT": "true",
        "EMAIL_HOST": "smtp.example.com",
    }


class EnvironmentReaderTests(SimpleTestCase):
    def test_malformed_integer_names_the_variable(self) -> None:
        with (
            mock.patch.dict(os.environ, {"OPERATOR_TOOL_CONCURRENCY": "four"}),
            self.assertRaisesMessage(ImproperlyConfigured, "OPERATOR_TOOL_CONCURRENCY"),
        ):
            env.env_int("OPERATOR_TOOL_CONCURRENCY", 4)

    def test_malformed_boolean_names_the_variable(self) -> None:
        with (
            mock.patch.dict(os.environ, {"DJANGO_DEBUG": "maybe"}),
            self.assertRaisesMessage(ImproperlyConfigured, "DJANGO_DEBUG"),
        ):
            env.env_bool("DJANGO_DEBUG", False)

    def test_boolean_words_are_read(self) -> None:
        with mock.patch.dict(os.environ, {"EMAIL_USE_TLS": "Yes"}):
            self.assertTrue(env.env_bool("EMAIL_USE_TLS", False))

    def test_list_ignores_blank_items(self) -> None:
        with mock.patch.dict(os.environ, {"DJANGO_ALLOWED_HOSTS": "a.example, ,b.example,"}):
            self.assertEqual(env.env_list("DJANGO_ALLOWED_HOSTS", []), ["a.example", "b.example"])

    def test_unset_variable_gives_the_default(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(env.env_int("OPERATOR_TOOL_CONCURRENCY", 4), 4)

    def test_integer_out_of_its_range_names_the_variable_and_the_range(self) -> None:
        with (
            mock.patch.dict(os.environ, {"OPERATOR_REFRESH_TOKEN_GRACE_SECONDS": "301"}),
            self.assertRaisesMessage(
                ImproperlyConfigured, "OPERATOR_REFRESH_TOKEN_GRACE_SECONDS must be between 0 and 300"
            ),
        ):
            env.env_int_between("OPERATOR_REFRESH_TOKEN_GRACE_SECONDS", 60, minimum=0, maximum=300)

    def test_integer_at_the_ends_of_its_range_is_read(self) -> None:
        for raw, expected in (("0", 0), ("300", 300)):
            with mock.patch.dict(os.environ, {"OPERATOR_REFRESH_TOKEN_GRACE_SECONDS": raw}):
                self.assertEqual(
                    env.env_int_between("OPERATOR_REFRESH_TOKEN_GRACE_SECONDS", 60, minimum=0, maximum=300), expected
                )


def _manage(*arguments: str, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=PROJECT_DIR,
        env={"PATH": os.environ.get("PATH", ""), **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )


class DeployCheckTests(SimpleTestCase):
    def test_deploy_check_has_no_errors_with_production_values(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _manage("check", "--deploy", "--fail-level", "ERROR", environment=production_environment(var_dir))
        self.assertEqual(result.returncode, 0, result.stderr + result.stdout)

    def test_base_url_with_a_path_is_refused_at_start(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _manage(
                "check",
                environment={"OPERATOR_BASE_URL": "https://operator.example.com/sub", "OPERATOR_VAR_DIR": var_dir},
            )
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("OPERATOR_BASE_URL", result.stderr)

    def test_grace_window_over_five_minutes_is_refused_at_start(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _manage(
                "check", environment={"OPERATOR_VAR_DIR": var_dir, "OPERATOR_REFRESH_TOKEN_GRACE_SECONDS": "600"}
            )
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("OPERATOR_REFRESH_TOKEN_GRACE_SECONDS", result.stderr)

    def test_missing_retired_signing_key_is_refused_at_start(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _manage(
                "check",
                environment={
                    "OPERATOR_VAR_DIR": var_dir,
                    "OPERATOR_INACTIVE_SIGNING_KEY_PATHS": f"{var_dir}/no-such-key.pem",
                },
            )
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("OPERATOR_INACTIVE_SIGNING_KEY_PATHS", result.stderr)


class DatabaseConnectTimeoutTests(SimpleTestCase):
    """`DATABASE_CONNECT_TIMEOUT` reaches psycopg; tests/operator_site/test_health_silent_database.py runs it."""

    def connect_timeout(self, database_url: str, **environment: str) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory() as var_dir:
            return _manage(
                "shell",
                "--no-imports",
                "-c",
                "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS']['connect_timeout'])",
                environment={"OPERATOR_VAR_DIR": var_dir, "DATABASE_URL": database_url, **environment},
            )

    def test_postgresql_waits_five_seconds_for_a_connection_by_default(self) -> None:
        result = self.connect_timeout("postgres://operator:secret@127.0.0.1:5432/operator")

        self.assertEqual(result.stdout.strip(), "5", result.stderr)

    def test_the_variable_sets_it_and_the_urls_own_wins(self) -> None:
        url = "postgres://operator:secret@127.0.0.1:5432/operator"

        self.assertEqual(self.connect_timeout(url, DATABASE_CONNECT_TIMEOUT="2").stdout.strip(), "2")
        self.assertEqual(
            self.connect_timeout(f"{url}?connect_timeout=9", DATABASE_CONNECT_TIMEOUT="2").stdout.strip(), "9"
        )

    def test_a_timeout_of_zero_which_libpq_reads_as_none_is_refused(self) -> None:
        result = self.connect_timeout(
            "postgres://operator:secret@127.0.0.1:5432/operator", DATABASE_CONNECT_TIMEOUT="0"
        )

        self.assertNotEqual(result.returncode, 0)
        self.assertIn("DATABASE_CONNECT_TIMEOUT", result.stderr)
