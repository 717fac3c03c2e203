"""Bodies over the limit, or of no declared length, get each address's own 4xx behind both shipped proxies.

The finding (issue 34): straight to gunicorn every endpoint answered a body
over 1 MiB with its 413, but behind deploy/haproxy.cfg some ended with no
answer or the proxy's 502: the app answered before reading the body, and the
worker's close reset the connection before the proxy had read the answer.
Behind deploy/Caddyfile every such body got Caddy's own empty 413, the
operator endpoint's included, where docs/transport.md#order-of-checks puts 401
first. A chunked body with no Content-Length was read as empty.

Real components: gunicorn run by the shipped gunicorn.conf.py, HAProxy from
Debian running deploy/haproxy.cfg, Caddy running deploy/Caddyfile (each but
for addresses), and a raw socket for the client, which sends its whole body
while it reads the answer, as a client that does not wait would.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx
from django.test import SimpleTestCase

from tests.live_servers import BASE_DIR, free_port, manage, server_environment, start_process_on, start_shipped_gunicorn
from tests.operator_site.caddy import shipped_caddy
from tests.support import require

HAPROXY = "/usr/sbin/haproxy"
OVER_LIMIT = b"x" * (3 * 1024 * 1024)
SMALL_JSON = b'{"email": "someone@example.test"}'
# Several times each: the reset raced the proxy's read, and lost it a third of the time.
ATTEMPTS = 3
ANSWER_SECONDS = 20
# Each address and a mark of its own format (docs/limits.md#request-size).
FORMATS = {
    "/api/auth/oauth2/register": ("application/json", b'"error": "invalid_request"'),
    "/api/auth/oauth2/token": ("application/json", b'"error": "invalid_request"'),
    "/api/agent/auth": ("application/json", b'"code": "invalid_arguments"'),
    "/api/auth/sign-in": ("text/html; charset=utf-8", b"<!doctype html>"),
    "/api/mcp/docs": ("application/json", b'"code": -32600'),
}
OPERATOR_ENDPOINT = "/api/mcp/operator"


def send(port: int, path: str, body: bytes, *, chunked: bool = False) -> tuple[int, str, bytes]:
    """POST `body` to `path`; the status, Content-Type and body of the answer (0 when none came)."""
    connection = socket.create_connection(("127.0.0.1", port))
    connection.settimeout(ANSWER_SECONDS)
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(body)}"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Connection: close\r\n{length}\r\n\r\n"
    ).encode()

    def write() -> None:
        try:
            connection.sendall(head + (b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if chunked else body))
        except OSError:
            return  # the server stopped reading once it answered

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except OSError:
        pass  # a reset: whatever came before it is the answer
    finally:
        connection.close()
        writer.join(timeout=ANSWER_SECONDS)
    head_bytes, _, answer = received.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return 0, "", received
    content_type = next(
        (line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("content-type:")), ""
    )
    return status, content_type, answer


class BodiesBehindProxiesTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        require(Path(HAPROXY).exists(), "HAProxy is not installed (Debian: haproxy)", component="haproxy")
        workdir = Path(tempfile.mkdtemp(prefix="operator-bodies-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        app_port, cls.haproxy_port, cls.caddy_port = free_port(), free_port(), free_port()
        caddy_command, caddy_environment = shipped_caddy(
            workdir, app_port=app_port, domain=f"http://127.0.0.1:{cls.caddy_port}"
        )
        app_environment = server_environment(
            f"http://127.0.0.1:{cls.haproxy_port}",
            DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
            OPERATOR_VAR_DIR=str(workdir),
            OPERATOR_TRUSTED_PROXIES="1",
            GUNICORN_BIND=f"127.0.0.1:{app_port}",
            GUNICORN_WORKERS="2",
            GUNICORN_LOG_LEVEL="warning",
        )
        manage("migrate", "--noinput", environment=app_environment)
        start_shipped_gunicorn(cls, environment=app_environment, port=app_port, log=workdir / "gunicorn.log")
        haproxy_environment = {
            "PATH": os.environ.get("PATH", ""),
            "OPERATOR_PROXY_BIND": f"127.0.0.1:{cls.haproxy_port}",
            "OPERATOR_PROXY_SOCKET": str(workdir / "haproxy.sock"),
            "OPERATOR_APP_1": f"127.0.0.1:{app_port}",
            "OPERATOR_APP_2": f"127.0.0.1:{app_port}",
            "OPERATOR_APP_WORKERS": "2",
        }
        haproxy_config = BASE_DIR / "deploy" / "haproxy.cfg"
        start_process_on(
            cls,
            [HAPROXY, "-db", "-f", str(haproxy_config)],
            port=cls.haproxy_port,
            environment=haproxy_environment,
            log=workdir / "haproxy.log",
        )
        start_process_on(
            cls,
            caddy_command,
            port=cls.caddy_port,
            environment=caddy_environment,
            log=workdir / "caddy.log",
        )
        # The workers' first requests load what Django loads lazily, and HAProxy's checks pass twice.
        httpx.get(f"http://127.0.0.1:{app_port}/healthz", timeout=60).raise_for_status()
        for port in (cls.haproxy_port, cls.caddy_port):
            cls._wait_healthy(port)

    @classmethod
    def _wait_healthy(cls, port: int) -> None:
        with httpx.Client(timeout=5) as client:
            for _ in range(120):
                try:
                    if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.5)
        raise AssertionError(f"the proxy on {port} never answered /healthz")

    def proxies(self) -> dict[str, int]:
        return {"haproxy": self.haproxy_port, "caddy": self.caddy_port}

    def assert_own_format(self, answer: tuple[int, str, bytes], status: int, path: str) -> None:
        content_type, mark = FORMATS[path]
        self.assertEqual(answer[:2], (status, content_type), answer)
        self.assertIn(mark, answer[2])

    def test_a_body_over_the_limit_gets_each_address_own_413_through_both_proxies(self) -> None:
        for proxy, port in self.proxies().items():
            for path in FORMATS:
                for attempt in range(ATTEMPTS):
                    with self.subTest(proxy=proxy, path=path, attempt=attempt):
                        self.assert_own_format(send(port, path, OVER_LIMIT), 413, path)

    def test_the_operator_endpoint_answers_401_before_the_size_through_both_proxies(self) -> None:
        for proxy, port in self.proxies().items():
            for attempt in range(ATTEMPTS):
                with self.subTest(proxy=proxy, attempt=attempt):
                    status, content_type, body = send(port, OPERATOR_ENDPOINT, OVER_LIMIT)

                    self.assertEqual((status, content_type), (401, "application/json"), body)
                    self.assertIn(b'"error": "invalid_request"', body)

    def test_a_chunked_body_gets_each_address_own_411_through_both_proxies(self) -> None:
        for proxy, port in self.proxies().items():
            for path in FORMATS:
                with self.subTest(proxy=proxy, path=path):
                    self.assert_own_format(send(port, path, SMALL_JSON, chunked=True), 411, path)
