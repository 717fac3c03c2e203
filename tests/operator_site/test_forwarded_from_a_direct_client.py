"""A client that reaches gunicorn directly cannot pick its own address with X-Forwarded-For.

The attack (issue 34): with a proxy configured (`OPERATOR_TRUSTED_PROXIES=1`),
gunicorn bound on every address and the application trusted X-Forwarded-For
from any peer, so a direct client sent a fresh address with each request and
no per-address limit ever counted it. Real components: gunicorn started with
the shipped `gunicorn.conf.py`, whose configured proxy is an address the test
is not, and plain HTTP requests from loopback.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import httpx
from django.test import SimpleTestCase

from tests.live_servers import free_port, manage, server_environment, start_shipped_gunicorn

REGISTRATIONS_PER_HOUR = 3
PROXY_ADDRESS = "192.0.2.10"  # TEST-NET-1 (RFC 5737): never the test's own address


class DirectClientTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        workdir = Path(tempfile.mkdtemp(prefix="operator-forwarded-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        port = free_port()
        cls.base_url = f"http://127.0.0.1:{port}"
        environment = server_environment(
            cls.base_url,
            OPERATOR_VAR_DIR=str(workdir),
            DATABASE_URL=f"sqlite:///{workdir / 'operator.sqlite3'}",
            OPERATOR_TRUSTED_PROXIES="1",
            OPERATOR_PROXY_ADDRESSES=PROXY_ADDRESS,
            OPERATOR_HEADLESS_REGISTRATIONS_PER_HOUR=str(REGISTRATIONS_PER_HOUR),
            # One process: the per-address counts live in its memory (no Redis here).
            GUNICORN_WORKERS="1",
            GUNICORN_BIND=f"127.0.0.1:{port}",
        )
        manage("migrate", "--noinput", environment=environment)
        start_shipped_gunicorn(cls, environment=environment, port=port, log=workdir / "gunicorn.log")

    def test_a_direct_client_sending_x_forwarded_for_is_counted_under_its_real_address(self) -> None:
        statuses = []
        with httpx.Client(timeout=30) as client:
            for number in range(REGISTRATIONS_PER_HOUR + 2):
                response = client.post(
                    f"{self.base_url}/api/agent/auth",
                    json={"email": f"agent-{number}@example.test"},
                    headers={"X-Forwarded-For": f"198.51.100.{number + 1}"},
                )
                statuses.append(response.status_code)
        self.assertEqual(statuses, [202] * REGISTRATIONS_PER_HOUR + [429, 429])
