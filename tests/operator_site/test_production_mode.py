"""Production mode refuses to start without each secret and service; development needs nothing."""

import subprocess
import sys
import tempfile
from pathlib import Path

from django.test import SimpleTestCase

from tests.operator_site.test_settings import PROJECT_DIR, _manage, production_environment

IMPORT_SETTINGS = "import operator_site.settings"


def _import_settings(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", IMPORT_SETTINGS],
        cwd=PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


class ProductionModeTests(SimpleTestCase):
    def setUp(self) -> None:
        self.var_dir = tempfile.mkdtemp(prefix="operator-production-")
        self.environment = production_environment(self.var_dir)

    def assertRefusedNaming(self, variable: str, environment: dict[str, str]) -> None:
        result = _import_settings(environment)
        self.assertNotEqual(result.returncode, 0, f"started without {variable}")
        self.assertIn(f"{variable}:", result.stderr)

    def test_complete_production_environment_starts(self) -> None:
        result = _import_settings(self.environment)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_each_missing_secret_is_refused_by_name(self) -> None:
        for variable in (
            "DJANGO_SECRET_KEY",
            "OPERATOR_SIGNING_KEY",
            "OPERATOR_LTI_KEY",
            "OPERATOR_IDENTITY_PROVIDER_KEY",
            "REDIS_URL",
        ):
            with self.subTest(variable=variable):
                environment = {k: v for k, v in self.environment.items() if k != variable}
                self.assertRefusedNaming(variable, environment)

    def test_sqlite_database_is_refused(self) -> None:
        self.assertRefusedNaming("DATABASE_URL", {**self.environment, "DATABASE_URL": "sqlite:///db.sqlite3"})

    def test_missing_database_url_is_refused(self) -> None:
        environment = {k: v for k, v in self.environment.items() if k != "DATABASE_URL"}
        self.assertRefusedNaming("DATABASE_URL", environment)

    def test_plain_http_base_url_is_refused(self) -> None:
        self.assertRefusedNaming(
            "OPERATOR_BASE_URL", {**self.environment, "OPERATOR_BASE_URL": "http://operator.example.com"}
        )

    def test_development_key_under_var_is_not_accepted_in_production(self) -> None:
        Path(self.var_dir, "secret-key").write_text("development-secret")
        environment = {k: v for k, v in self.environment.items() if k != "DJANGO_SECRET_KEY"}
        self.assertRefusedNaming("DJANGO_SECRET_KEY", environment)

    def test_key_path_naming_a_missing_file_is_refused(self) -> None:
        environment = {k: v for k, v in self.environment.items() if k != "OPERATOR_SIGNING_KEY"}
        environment["OPERATOR_SIGNING_KEY_PATH"] = f"{self.var_dir}/no-such-key.pem"
        self.assertRefusedNaming("OPERATOR_SIGNING_KEY_PATH", environment)

    def test_secrets_given_as_files_are_accepted(self) -> None:
        environment = {
            k: v for k, v in self.environment.items() if k not in ("DJANGO_SECRET_KEY", "OPERATOR_SIGNING_KEY")
        }
        Path(self.var_dir, "secret").write_text("a-long-random-production-secret-from-a-file-" + "y" * 30)
        Path(self.var_dir, "signing.pem").write_text(self.environment["OPERATOR_SIGNING_KEY"])
        environment["DJANGO_SECRET_KEY_FILE"] = f"{self.var_dir}/secret"
        environment["OPERATOR_SIGNING_KEY_PATH"] = f"{self.var_dir}/signing.pem"
        self.assertEqual(_import_settings(environment).returncode, 0)

    def test_manage_py_prints_the_refusal_without_a_traceback(self) -> None:
        environment = {k: v for k, v in self.environment.items() if k != "REDIS_URL"}
        result = _manage("check", environment=environment)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("REDIS_URL: must be set", result.stderr)
        self.assertNotIn("Traceback", result.stderr)


class DeployChecksTests(SimpleTestCase):
    def test_deploy_check_names_the_development_secret_key(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            created = _manage("create_local_secrets", environment={"OPERATOR_VAR_DIR": var_dir})
            self.assertEqual(created.returncode, 0, created.stderr)
            result = _manage("check", "--deploy", environment={"OPERATOR_VAR_DIR": var_dir})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("operator.E001", result.stderr)
        self.assertIn("DJANGO_SECRET_KEY: is the development value", result.stderr)

    def test_each_rule_has_its_own_check_id(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _manage("check", "--deploy", environment={"OPERATOR_VAR_DIR": var_dir})
        for check_id in ("E001", "E002", "E003", "E005", "E010", "E011", "E012"):
            self.assertIn(f"operator.{check_id}", result.stderr)


class DevelopmentSecretsTests(SimpleTestCase):
    def test_importing_settings_writes_no_file(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _import_settings({"OPERATOR_VAR_DIR": f"{var_dir}/var"})
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(list(Path(var_dir).iterdir()), [])

    def test_create_local_secrets_writes_owner_only_files_once(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            _manage("create_local_secrets", environment={"OPERATOR_VAR_DIR": var_dir})
            first = {path.name: path.read_text() for path in Path(var_dir).iterdir()}
            again = _manage("create_local_secrets", environment={"OPERATOR_VAR_DIR": var_dir})
            second = {path.name: path.read_text() for path in Path(var_dir).iterdir()}
            modes = {path.name: path.stat().st_mode & 0o077 for path in Path(var_dir).iterdir()}
        self.assertEqual(
            set(first), {"secret-key", "oauth-signing-key.pem", "lti-signing-key.pem", "identity-provider-key"}
        )
        self.assertEqual(first, second)
        self.assertIn("exists already", again.stdout)
        self.assertEqual(set(modes.values()), {0})

    def test_development_needs_no_environment_after_create_local_secrets(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            _manage("create_local_secrets", environment={"OPERATOR_VAR_DIR": var_dir})
            result = _manage("check", "--fail-level", "WARNING", environment={"OPERATOR_VAR_DIR": var_dir})
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_generate_signing_key_prints_a_new_pem_each_time(self) -> None:
        first = _manage("generate_signing_key", environment={})
        second = _manage("generate_signing_key", environment={})
        self.assertTrue(first.stdout.startswith("-----BEGIN PRIVATE KEY-----"))
        self.assertNotEqual(first.stdout, second.stdout)
