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
import os
import shutil
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

from mcp_operator.limits import leases_key
from operator_core.conf import operator_settings
from operator_core.errors import ErrorCode
from tests.live_servers import free_port, redis_url_for, start_gunicorn
from tests.mcp_operator.base import META
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers

BASE_DIR = Path(__file__).resolve().parents[2]
CALLS_PER_MINUTE = 5
CONCURRENCY = 2
BURST = 12

SEED = """
import json
import django
django.setup()
from django.contrib.auth import get_user_model
from oauth.tokens import issue_access_token
from organizations.models import Role
from organizations.services import add_membership, create_organization
from knowledge.services import create_module, create_source
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


class LimitsAcrossWorkersTests(SimpleTestCase):
    gunicorn_process: subprocess.Popen | None = None

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        quiet_loggers(cls.addClassCleanup, *HTTP_CLIENT_LOGGERS)
        cls.workdir = Path(tempfile.mkdtemp(prefix="operator-limits-"))
        cls.addClassCleanup(shutil.rmtree, cls.workdir, ignore_errors=True)
        cls.redis_url = redis_url_for(cls, cls.workdir)
        port = free_port()
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
        cls.gunicorn_process = start_gunicorn(cls, environment=env, port=port, log=cls.workdir / "gunicorn.log")
        cls.redis = RedisCache(cls.redis_url, {})

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
        deadline_ms = int((time.time() + operator_settings().tool_lease_seconds) * 1000)
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
