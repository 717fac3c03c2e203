"""A health read meets a database that takes the connection and never answers, and says 503 in bounded time.

The finding (issue 35): PostgreSQL connections had no connect timeout, and
libpq waits for ever on an address that completes the TCP handshake and then
says nothing (a host gone from the network behind a load balancer, a full
backlog). /readyz and /healthz/dependencies then hung until gunicorn's timeout
killed the worker, and the probe got no answer at all. `DATABASE_CONNECT_TIMEOUT`
(docs/configuration.md, 5 seconds by default) bounds it.

Real components: gunicorn with one sync worker, run by the shipped
gunicorn.conf.py, its DATABASE_URL on PostgreSQL at a listening socket that
never accepts.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

import httpx
from django.test import SimpleTestCase

from tests.live_servers import free_port, server_environment, start_shipped_gunicorn

# Well over the default connect timeout (5 s), well under gunicorn's (30 s), which a held worker waits out.
ANSWER_SECONDS = 20.0


class SilentDatabaseHealthTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        workdir = Path(tempfile.mkdtemp(prefix="operator-silent-db-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        # Listens, so the kernel completes each handshake, and never accepts: nothing is ever answered.
        silent = socket.create_server(("127.0.0.1", 0), backlog=8)
        cls.addClassCleanup(silent.close)
        cls.port = free_port()
        environment = server_environment(
            f"http://127.0.0.1:{cls.port}",
            DATABASE_URL=f"postgres://operator:unused@127.0.0.1:{silent.getsockname()[1]}/operator",
            OPERATOR_VAR_DIR=str(workdir),
            GUNICORN_BIND=f"127.0.0.1:{cls.port}",
            GUNICORN_WORKERS="1",
            GUNICORN_TIMEOUT="30",
            GUNICORN_LOG_LEVEL="warning",
        )
        start_shipped_gunicorn(cls, environment=environment, port=cls.port, log=workdir / "gunicorn.log")
        # The worker's first request loads what Django loads lazily; liveness reads no database.
        httpx.get(f"http://127.0.0.1:{cls.port}/healthz", timeout=60).raise_for_status()

    def read(self, path: str) -> tuple[httpx.Response, float]:
        started = time.monotonic()
        response = httpx.get(f"http://127.0.0.1:{self.port}{path}", timeout=ANSWER_SECONDS)
        return response, time.monotonic() - started

    def test_readiness_is_503_naming_the_database(self) -> None:
        response, took = self.read("/readyz")

        self.assertEqual(response.status_code, 503)
        self.assertIn("database", response.json()["failed"])
        self.assertLess(took, ANSWER_SECONDS)

    def test_the_dependencies_read_is_503_with_the_database_down(self) -> None:
        response, took = self.read("/healthz/dependencies")

        self.assertEqual(response.status_code, 503)
        self.assertEqual(response.json()["dependencies"]["database"], "down")
        self.assertLess(took, ANSWER_SECONDS)
