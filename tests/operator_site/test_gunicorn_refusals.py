"""gunicorn refuses to start in production mode with one log line per problem (docs/deploy.md#production-mode).

The finding (issue 34): gunicorn printed all of production mode's refusals on
one `[ERROR]` line, after a heading run into the first of them. Real path:
gunicorn started with the shipped `gunicorn.conf.py`, whose start-up check
imports the settings in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from django.test import SimpleTestCase

from operator_core.signing_keys import generate_private_key_pem
from tests.live_servers import BASE_DIR, free_port

# Six problems at once: no secret key, plain http, SQLite, no Redis, debug on, no SMTP host.
PROBLEMS = ("DJANGO_SECRET_KEY", "OPERATOR_BASE_URL", "DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG", "EMAIL_HOST")


def start_refused(var_dir: str, **extra: str) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "OPERATOR_ENV": "production",
        "OPERATOR_VAR_DIR": var_dir,
        "OPERATOR_BASE_URL": "http://operator.example.com",
        "DATABASE_URL": f"sqlite:///{var_dir}/operator.sqlite3",
        "OPERATOR_SIGNING_KEY": generate_private_key_pem(),
        "OPERATOR_LTI_KEY": generate_private_key_pem(),
        "DJANGO_DEBUG": "true",
        "GUNICORN_BIND": f"127.0.0.1:{free_port()}",
        "GUNICORN_WORKERS": "1",
        **extra,
    }
    return subprocess.run(
        [str(Path(sys.executable).with_name("gunicorn")), "-c", "gunicorn.conf.py", "operator_site.wsgi"],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


class GunicornRefusalTests(SimpleTestCase):
    def assertOneLinePerProblem(self, messages: list[str], output: str) -> None:
        for variable in PROBLEMS:
            with self.subTest(variable=variable):
                own = [message for message in messages if message.startswith(f"{variable}:")]
                self.assertEqual(len(own), 1, output)
        for message in messages:
            named = [variable for variable in PROBLEMS if f"{variable}:" in message]
            self.assertLessEqual(len(named), 1, f"several problems on one line: {message}")
        self.assertIn("Not starting: fix the settings above (docs/configuration.md).", messages)

    def test_each_problem_is_its_own_error_line(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = start_refused(var_dir)
        self.assertNotEqual(result.returncode, 0)
        output = result.stdout + result.stderr
        messages = [line.split("[ERROR] ", 1)[1] for line in output.splitlines() if "[ERROR] " in line]
        self.assertOneLinePerProblem(messages, output)

    def test_each_problem_is_its_own_json_line(self) -> None:
        with tempfile.TemporaryDirectory() as var_dir:
            result = start_refused(var_dir, LOG_FORMAT="json")
        self.assertNotEqual(result.returncode, 0)
        output = result.stdout + result.stderr
        entries = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
        messages = [entry["message"] for entry in entries if entry["level"] == "ERROR"]
        self.assertOneLinePerProblem(messages, output)
