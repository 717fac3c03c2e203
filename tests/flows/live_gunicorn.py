"""A live gunicorn, with several workers and threads, serving the test run's own database.

The server runs `gunicorn.conf.py` as production does (the start-up checks
included), in processes of its own, against the database the test run created:
SQLite or PostgreSQL, whichever DATABASE_URL chose. Tests built on it are
`TransactionTestCase`s, so every row they write is committed and the server sees
it, and every row the server writes can be read back here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from tests.live_servers import free_port

BASE_DIR = Path(__file__).resolve().parents[2]
START_TIMEOUT_SECONDS = 60


def database_url_of_this_run() -> str:
    """DATABASE_URL of the database this test run uses (its test database, not the configured one)."""
    database = connection.settings_dict
    if database["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{Path(database['NAME']).resolve()}"
    credentials = quote(database["USER"], safe="")
    if database["PASSWORD"]:
        credentials += ":" + quote(database["PASSWORD"], safe="")
    return f"postgres://{credentials}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


class LiveGunicorn:
    """One gunicorn serving the test database on a free loopback port; `stop()` ends it."""

    def __init__(self, *, workers: int, threads: int, environment: dict[str, str]) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="operator-gunicorn-"))
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        self.log_path = self.workdir / "server.log"
        env = {
            "PATH": os.environ.get("PATH", ""),
            "DJANGO_SETTINGS_MODULE": "operator_site.settings",
            "DATABASE_URL": database_url_of_this_run(),
            "OPERATOR_VAR_DIR": str(self.workdir),
            "OPERATOR_BASE_URL": self.base_url,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            # The test run's own secrets, so nothing is generated or read from var/.
            "DJANGO_SECRET_KEY": settings.SECRET_KEY,
            "OPERATOR_SIGNING_KEY": settings.OPERATOR_SIGNING_KEY,
            "OPERATOR_LTI_KEY": settings.OPERATOR_LTI_PRIVATE_KEY,
            # Providers' client secrets sealed by the test process open in the server.
            "OPERATOR_IDENTITY_PROVIDER_KEY": settings.OPERATOR_IDENTITY_PROVIDER_KEY,
            "LOG_FORMAT": "json",
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "GUNICORN_WORKERS": str(workers),
            "GUNICORN_THREADS": str(threads),
            "GUNICORN_LOG_LEVEL": "warning",
            **environment,
        }
        gunicorn = Path(sys.executable).with_name("gunicorn")
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(  # our own interpreter's gunicorn, no shell
                [str(gunicorn), "-c", str(BASE_DIR / "gunicorn.conf.py")],
                cwd=BASE_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            self._wait_until_listening(port)
        except BaseException:
            self.stop()
            raise

    def _wait_until_listening(self, port: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited early:\n{self.log_path.read_text()[-4000:]}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.1)
        raise AssertionError(f"gunicorn did not listen on {port}:\n{self.log_path.read_text()[-4000:]}")

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def log_records(self, *, since: int = 0) -> list[dict[str, Any]]:
        """The JSON log records the server wrote after byte `since`."""
        with self.log_path.open("rb") as log:
            log.seek(since)
            lines = log.read().decode("utf-8", "replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)
