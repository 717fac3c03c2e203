"""A client that keeps its socket open after a whole request's answer holds no worker (gunicorn.conf.py).

The finding (issue 34): the shipped `post_request` hook read and dropped what a
client still sent for up to 2 seconds after every answer, and gunicorn's own
close waited up to 2 seconds more, so each connection a client left open after
its answer held a sync worker that long: one client could keep every worker
busy. The linger is for a body the app left unread (413, 411, the operator
endpoint's 401; tests/operator_site/test_bodies_behind_proxies.py) and only
for it.

Real components: gunicorn with one sync worker, run by the shipped
gunicorn.conf.py, and raw sockets for the clients, which read their answer to
the server's end of it and then keep their sockets open.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

import httpx
from django.test import SimpleTestCase

from tests.live_servers import free_port, manage, server_environment, start_shipped_gunicorn

HELD = 5
# Five held connections cost at least 10 seconds when each holds the worker 2; healthy, they take milliseconds.
PROMPT_SECONDS = 4.0
ANSWER_SECONDS = 20


class HeldConnection:
    """A raw request whose answer is read until the server ends it, the socket then left open."""

    def __init__(self, port: int, request: bytes) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.settimeout(ANSWER_SECONDS)
        self.socket.sendall(request)
        received = b""
        while chunk := self.socket.recv(65536):
            received += chunk
        self.status = int(received.split(b"\r\n", 1)[0].split()[1])

    def close(self) -> None:
        self.socket.close()


class HeldConnectionTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        workdir = Path(tempfile.mkdtemp(prefix="operator-held-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        cls.port = free_port()
        environment = server_environment(
            f"http://127.0.0.1:{cls.port}",
            DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
            OPERATOR_VAR_DIR=str(workdir),
            GUNICORN_BIND=f"127.0.0.1:{cls.port}",
            GUNICORN_WORKERS="1",
            GUNICORN_LOG_LEVEL="warning",
        )
        manage("migrate", "--noinput", environment=environment)
        start_shipped_gunicorn(cls, environment=environment, port=cls.port, log=workdir / "gunicorn.log")
        # The worker's first request loads what Django loads lazily; no test should pay for it.
        httpx.get(f"http://127.0.0.1:{cls.port}/healthz", timeout=60).raise_for_status()

    def hold(self, request: bytes) -> HeldConnection:
        connection = HeldConnection(self.port, request)
        self.addCleanup(connection.close)
        return connection

    def assert_answered_promptly_behind(self, request: bytes, status: int) -> None:
        started = time.monotonic()
        answers = [self.hold(request).status for _ in range(HELD)]
        answers.append(httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=ANSWER_SECONDS).status_code)

        self.assertEqual(answers, [status] * HELD + [200])
        self.assertLess(time.monotonic() - started, PROMPT_SECONDS)

    def test_requests_without_a_body_left_open_hold_no_worker(self) -> None:
        self.assert_answered_promptly_behind(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200)

    def test_requests_whose_body_was_read_left_open_hold_no_worker(self) -> None:
        body = b"grant_type=authorization_code&code=nothing&client_id=nobody"
        request = (
            b"POST /api/auth/oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        self.assert_answered_promptly_behind(request, 401)
