"""Production mode refuses to start without each secret and service; development needs nothing."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from django.core import signing
from django.test import SimpleTestCase

from tests.live_servers import free_port, stop, wait_for_port
from tests.operator_site.test_settings import PROJECT_DIR, _manage, production_environment
from tests.support import require

IMPORT_SETTINGS = "import operator_site.settings"


def _import_settings(environment: dict[str, str], code: str = IMPORT_SETTINGS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
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
        Path(self.var_dir, "secret").chmod(0o600)
        Path(self.var_dir, "signing.pem").chmod(0o400)
        environment["DJANGO_SECRET_KEY_FILE"] = f"{self.var_dir}/secret"
        environment["OPERATOR_SIGNING_KEY_PATH"] = f"{self.var_dir}/signing.pem"
        self.assertEqual(_import_settings(environment).returncode, 0)

    def test_debug_is_refused(self) -> None:
        self.assertRefusedNaming("DJANGO_DEBUG", {**self.environment, "DJANGO_DEBUG": "true"})

    def test_missing_smtp_host_is_refused(self) -> None:
        environment = {k: v for k, v in self.environment.items() if k != "EMAIL_HOST"}
        self.assertRefusedNaming("EMAIL_HOST", environment)

    def test_smtp_uses_starttls_unless_told_otherwise(self) -> None:
        show = "import operator_site.settings as s; print(s.EMAIL_USE_TLS, s.EMAIL_USE_SSL)"
        cases = {
            (): "True False",
            (("EMAIL_USE_SSL", "true"),): "False True",
            (("EMAIL_USE_TLS", "false"),): "False False",
        }
        for extra, expected in cases.items():
            with self.subTest(extra=extra):
                result = _import_settings({**self.environment, **dict(extra)}, show)
                self.assertEqual(result.stdout.strip(), expected, result.stderr)

    def test_key_files_open_to_group_or_others_are_refused_naming_file_and_mode(self) -> None:
        environment = {
            k: v for k, v in self.environment.items() if k not in ("OPERATOR_SIGNING_KEY", "OPERATOR_LTI_KEY")
        }
        for name, variable in (("signing.pem", "OPERATOR_SIGNING_KEY_PATH"), ("lti.pem", "OPERATOR_LTI_KEY_PATH")):
            path = Path(self.var_dir, name)
            path.write_text(self.environment["OPERATOR_SIGNING_KEY"])
            path.chmod(0o400)
            environment[variable] = str(path)
        self.assertEqual(_import_settings(environment).returncode, 0)
        for mode in (0o640, 0o604):
            Path(self.var_dir, "lti.pem").chmod(mode)
            with self.subTest(mode=oct(mode)):
                result = _import_settings(environment)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn(f"OPERATOR_LTI_KEY_PATH: names {self.var_dir}/lti.pem", result.stderr)
                self.assertIn(f"(mode {mode:04o})", result.stderr)
                self.assertNotIn("OPERATOR_SIGNING_KEY_PATH:", result.stderr)

    def test_secret_files_given_by_path_open_to_others_are_refused(self) -> None:
        retired = Path(self.var_dir, "retired.pem")
        retired.write_text(self.environment["OPERATOR_SIGNING_KEY"])
        fallbacks = Path(self.var_dir, "fallbacks")
        fallbacks.write_text("an-old-secret-key\n")
        secret = Path(self.var_dir, "secret")
        secret.write_text("a-long-random-production-secret-from-a-file-" + "y" * 30)
        for path in (retired, fallbacks, secret):
            path.chmod(0o644)
        environment = {k: v for k, v in self.environment.items() if k != "DJANGO_SECRET_KEY"}
        environment.update(
            OPERATOR_INACTIVE_SIGNING_KEY_PATHS=str(retired),
            DJANGO_SECRET_KEY_FALLBACKS_FILE=str(fallbacks),
            DJANGO_SECRET_KEY_FILE=str(secret),
        )
        result = _import_settings(environment)
        self.assertNotEqual(result.returncode, 0)
        for variable in (
            "OPERATOR_INACTIVE_SIGNING_KEY_PATHS",
            "DJANGO_SECRET_KEY_FALLBACKS_FILE",
            "DJANGO_SECRET_KEY_FILE",
        ):
            self.assertIn(f"{variable}: names ", result.stderr)

    def test_refusal_prints_one_line_per_problem(self) -> None:
        environment = {k: v for k, v in self.environment.items() if k not in ("REDIS_URL", "EMAIL_HOST")}
        result = _manage("check", environment={**environment, "DJANGO_DEBUG": "true"})
        lines = result.stderr.strip().splitlines()
        self.assertEqual(
            lines,
            [
                "Service Operator cannot start: production mode (OPERATOR_ENV=production) refuses these settings:",
                "REDIS_URL: must be set: limits and caches are shared through Redis",
                "DJANGO_DEBUG: must be false: debug pages show settings and source to anyone",
                "EMAIL_HOST: must name an SMTP server: without one, verification codes would be printed in the logs",
            ],
        )

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
        for check_id in ("E001", "E002", "E003", "E005", "E010", "E011", "E012", "E014"):
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


class SecretKeyRotationTests(SimpleTestCase):
    def test_a_value_signed_with_a_former_secret_key_still_verifies_during_the_rotation(self) -> None:
        former = "a-former-secret-key-" + "f" * 40
        signed = signing.dumps("still valid", key=former)
        show = "import sys, django; django.setup(); from django.core import signing; print(signing.loads(sys.argv[1]))"
        with tempfile.TemporaryDirectory() as var_dir:
            fallbacks = Path(var_dir, "fallbacks")
            fallbacks.write_text(f"another-former-key\n{former}\n")
            environment = {
                "DJANGO_SETTINGS_MODULE": "operator_site.settings",
                "OPERATOR_VAR_DIR": var_dir,
                "DJANGO_SECRET_KEY": "the-new-secret-key-" + "n" * 40,
            }
            by_list = _run_python(show, signed, environment={**environment, "DJANGO_SECRET_KEY_FALLBACKS": former})
            by_file = _run_python(
                show, signed, environment={**environment, "DJANGO_SECRET_KEY_FALLBACKS_FILE": str(fallbacks)}
            )
            without = _run_python(show, signed, environment=environment)
        self.assertEqual(by_list.stdout.strip(), "still valid", by_list.stderr)
        self.assertEqual(by_file.stdout.strip(), "still valid", by_file.stderr)
        self.assertIn("BadSignature", without.stderr)


def _run_python(code: str, *arguments: str, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        cwd=PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


class PasswordFileTests(SimpleTestCase):
    def test_database_and_smtp_passwords_are_read_from_their_files(self) -> None:
        show = (
            "import operator_site.settings as s; "
            "print(s.DATABASES['default']['PASSWORD'], s.EMAIL_HOST_PASSWORD, "
            "sorted(v for v, _ in s.OPERATOR_SECRET_FILES))"
        )
        with tempfile.TemporaryDirectory() as var_dir:
            Path(var_dir, "database-password").write_text("from-the-file\n")
            Path(var_dir, "email-password").write_text("smtp-secret\n")
            result = _run_python(
                show,
                environment={
                    "OPERATOR_VAR_DIR": var_dir,
                    "DATABASE_URL": "postgres://operator:in-the-url@127.0.0.1:5432/operator",
                    "DATABASE_PASSWORD_FILE": f"{var_dir}/database-password",
                    "EMAIL_HOST": "smtp.example.com",
                    "EMAIL_HOST_PASSWORD_FILE": f"{var_dir}/email-password",
                },
            )
        self.assertEqual(
            result.stdout.strip(),
            "from-the-file smtp-secret ['DATABASE_PASSWORD_FILE', 'EMAIL_HOST_PASSWORD_FILE']",
            result.stderr,
        )

    def test_a_password_file_that_is_missing_is_refused_by_name(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = _import_settings({"OPERATOR_VAR_DIR": var_dir, "DATABASE_PASSWORD_FILE": f"{var_dir}/none"})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("DATABASE_PASSWORD_FILE names a missing file", result.stderr)


class RedisPasswordFileTests(SimpleTestCase):
    def test_the_cache_signs_in_to_redis_with_the_password_from_its_file(self) -> None:
        # REDIS_URL could only carry its password inline, where every process listing shows it.
        require(shutil.which("redis-server") is not None, "no redis-server", component="redis")
        use_cache = (
            "import django; django.setup(); from django.core.cache import cache; "
            "cache.set('redis-password-file', 'signed in'); print(cache.get('redis-password-file'))"
        )
        with tempfile.TemporaryDirectory() as var_dir:
            port = free_port()
            redis = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--requirepass", "s3cret"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
            )
            self.addCleanup(stop, redis)
            wait_for_port(port, redis, Path(var_dir) / "no-log")
            Path(var_dir, "redis-password").write_text("s3cret\n")
            result = _run_python(
                use_cache,
                environment={
                    "DJANGO_SETTINGS_MODULE": "operator_site.settings",
                    "OPERATOR_VAR_DIR": var_dir,
                    "REDIS_URL": f"redis://127.0.0.1:{port}/0",
                    "REDIS_PASSWORD_FILE": f"{var_dir}/redis-password",
                },
            )
        self.assertEqual(result.stdout.strip(), "signed in", result.stderr[-2000:])
