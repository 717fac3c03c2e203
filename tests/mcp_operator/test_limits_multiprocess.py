"""Rate and concurrency limits across gunicorn worker processes sharing Redis (docs/tools.md#limits).

Real components end to end: a Redis server (REDIS_URL, or a private
`redis-server` started here when it is on PATH), gunicorn with two sync workers
serving the real WSGI application, and a temporary SQLite database migrated
and seeded by subprocesses. The gunicorn side always uses its own SQLite file,
whatever database the test run itself uses (SQLite or PostgreSQL): the test
process needs no rows, it only speaks HTTP, and the limits live in Redis.

Concurrency: no tool call can be made deliberately slow without a test-only
hook in production code, so the test occupies the slots in Redis directly,
as leases under the key `mcp_operator.limits.leases_key` computes, exactly as calls
in flight in other workers would, and asserts that the gunicorn workers refuse
with `concurrency_limited` and admit again once a lease is given back.

Rate: the workers' clock can't be pinned from here, and needn't be: a rate
window opens at the first call of its key (operator_core.rate_limits), so a
burst on a fresh key falls into one window wherever the wall clock stands.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from django.core.cache.backends.redis import RedisCache
from django.test import SimpleTestCase

from mcp_operator.limits import LEASE_SECONDS, leases_key
from operator_core.errors import ErrorCode
from tests.mcp_operator.base import META
from tests.support import require_redis_url

BASE_DIR = Path(__file__).resolve().parents[2]
CALLS_PER_MINUTE = 5
CONCURRENCY = 2
BURST = 12
START_TIMEOUT_SECONDS = 20

SEED = """
import json
import django
django.setup()
from django.contrib.auth import get_user_model
from oauth.tokens import issue_access_token
from organizations.models import Role
from organizations.services import add_membership, create_module, create_organization, create_source
organization = create_organization(slug="acme", name="Acme")
user = get_user_model().objects.create_user(username="bob@acme.test", email="bob@acme.test", password="x-unused-x")
add_membership(user=user, organization=organization, role=Role.MEMBER)
create_module(organization=organization, title="Forklift safety", sections=[("Intro", "Welcome.")])
create_source(organization=organization, title="Rules", kind="text", origin="", text="Helmets on site.")
token = issue_access_token(
    user_id=user.pk, organization_id=str(organization.pk), client_id="burst", scopes=["mcp:operator.read"],
    expires_in=600,
)
print(json.dumps({"user_id": user.pk, "organization_id": str(organization.pk), "token": token}))
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited early:\n{log.read_text()[-4000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"server did not listen on {port}:\n{log.read_text()[-4000:]}")


def _stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


class LimitsAcrossWorkersTests(SimpleTestCase):
    redis_process: subprocess.Popen | None = None
    gunicorn_process: subprocess.Popen | None = None

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        httpx_logger = logging.getLogger("httpx")
        cls.addClassCleanup(httpx_logger.setLevel, httpx_logger.level)
        httpx_logger.setLevel(logging.WARNING)  # one INFO line per request otherwise
        cls.workdir = Path(tempfile.mkdtemp(prefix="operator-limits-"))
        cls.addClassCleanup(shutil.rmtree, cls.workdir, ignore_errors=True)
        cls.redis_url = os.environ.get("REDIS_URL") or cls._start_private_redis()
        port = _free_port()
        cls.endpoint = f"http://127.0.0.1:{port}/api/mcp/operator"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "operator_site.settings",
            "DATABASE_URL": f"sqlite:///{cls.workdir / 'operator.sqlite3'}",
            "OPERATOR_VAR_DIR": str(cls.workdir),
            "OPERATOR_SIGNING_KEY_PATH": str(cls.workdir / "oauth-signing-key.pem"),
            "OPERATOR_LTI_KEY_PATH": str(cls.workdir / "lti-signing-key.pem"),
            "OPERATOR_BASE_URL": f"http://127.0.0.1:{port}",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "REDIS_URL": cls.redis_url,
            "OPERATOR_TOOL_CALLS_PER_MINUTE": str(CALLS_PER_MINUTE),
            "OPERATOR_TOOL_CONCURRENCY": str(CONCURRENCY),
        }
        python = sys.executable
        subprocess.run(
            [python, "manage.py", "migrate", "--noinput"], cwd=BASE_DIR, env=env, check=True, capture_output=True
        )
        seeded = subprocess.run([python, "-c", SEED], cwd=BASE_DIR, env=env, check=True, capture_output=True, text=True)
        cls.seed = json.loads(seeded.stdout.strip().splitlines()[-1])
        log = cls.workdir / "gunicorn.log"
        cls.gunicorn_process = subprocess.Popen(
            [
                str(Path(python).with_name("gunicorn")),
                "operator_site.wsgi",
                "--workers",
                "2",
                "--bind",
                f"127.0.0.1:{port}",
                "--log-level",
                "warning",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        cls.addClassCleanup(_stop, cls.gunicorn_process)
        _wait_for_port(port, cls.gunicorn_process, log)
        cls.redis = RedisCache(cls.redis_url, {})

    @classmethod
    def _start_private_redis(cls) -> str:
        if not shutil.which("redis-server"):
            return require_redis_url()  # skips here, fails under CI
        port = _free_port()
        log = cls.workdir / "redis.log"
        cls.redis_process = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        cls.addClassCleanup(_stop, cls.redis_process)
        _wait_for_port(port, cls.redis_process, log)
        return f"redis://127.0.0.1:{port}/0"

    def _call(self, client: httpx.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
        response = client.post(
            self.endpoint,
            json=body,
            headers={
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {self.seed['token']}",
                "Mcp-Method": "tools/call",
                "Mcp-Name": name,
            },
        )
        self.assertEqual(response.status_code, 200, response.text)
        return response.json()["result"]

    def _burst(self, name: str, arguments: dict[str, Any], count: int) -> list[str | None]:
        """Fire `count` calls at once from as many threads; their error codes (None: success)."""
        codes: list[str | None] = []
        failures: list[BaseException] = []
        barrier = threading.Barrier(count)
        lock = threading.Lock()

        def one() -> None:
            try:
                with httpx.Client(timeout=20) as client:
                    barrier.wait()
                    result = self._call(client, name, arguments)
                error = result["structuredContent"].get("error") if result.get("isError") else None
                with lock:
                    codes.append(error["code"] if error else None)
                    if error:
                        self.assertGreaterEqual(error["retryAfterSeconds"], 1)
            except BaseException as failure:  # surfaced in the test thread below
                with lock:
                    failures.append(failure)

        threads = [threading.Thread(target=one) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        if failures:
            raise failures[0]
        return codes

    def test_a_burst_admits_exactly_the_calls_per_minute_and_refuses_the_rest(self) -> None:
        codes = self._burst("list_modules", {}, BURST)

        self.assertEqual(codes.count(None), CALLS_PER_MINUTE)
        self.assertEqual(codes.count(ErrorCode.RATE_LIMITED), BURST - CALLS_PER_MINUTE)

    def test_calls_beyond_the_slots_held_in_other_workers_are_concurrency_limited(self) -> None:
        # the same key, prefix and version the workers' cache derives from it
        key = self.redis.make_and_validate_key(
            leases_key(
                user_id=self.seed["user_id"], organization_id=self.seed["organization_id"], tool_name="list_sources"
            )
        )
        client = self.redis._cache.get_client(write=True)
        deadline_ms = int((time.time() + LEASE_SECONDS) * 1000)
        # CONCURRENCY calls in flight elsewhere, as their workers' leases leave the set
        client.zadd(key, {f"elsewhere-{number}": deadline_ms for number in range(CONCURRENCY)})
        try:
            with httpx.Client(timeout=20) as client_http:
                refused = [self._call(client_http, "list_sources", {}) for _ in range(2)]
            client.zrem(key, "elsewhere-0")  # one of them finishes
            with httpx.Client(timeout=20) as client_http:
                admitted = self._call(client_http, "list_sources", {})
        finally:
            client.delete(key)

        for result in refused:
            self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.CONCURRENCY_LIMITED)
            self.assertEqual(result["structuredContent"]["error"]["retryAfterSeconds"], 1)
        self.assertNotIn("isError", admitted)
        self.assertEqual(len(admitted["structuredContent"]["sources"]), 1)
