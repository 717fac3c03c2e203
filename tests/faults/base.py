"""The fault tests' servers and helpers (tests/faults/test_faults.py): one class set-up for all of them.

A private PostgreSQL 15 cluster and a private Redis (tests/faults/servers.py),
gunicorn with two gthread workers serving the real WSGI application, and
aiosmtpd receiving the verification emails, all on loopback and stopped by the
class cleanups.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from django.test import SimpleTestCase

from operator_core.errors import OUTAGE_RETRY_AFTER_SECONDS, ErrorCode
from operator_core.mcp.jsonrpc import JSONRPC_TEMPORARILY_UNAVAILABLE
from tests.agent_auth.support import SmtpServer
from tests.faults.servers import (
    PrivatePostgres,
    PrivateRedis,
    describe,
    require_fault_servers,
)
from tests.live_servers import free_port, manage, server_environment, start_gunicorn
from tests.mcp_requests import CLIENT_META
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers

# Long enough for a call to a server already up to be answered while the dead worker's leases hold.
LEASE_SECONDS = 12
SLOTS = 4
BURST_TOOLS = ("list_modules", "list_sources")
PASSWORD = "faults-password"
EMAIL = "bob@acme.test"
TOOL = "list_modules"
SEED = f"""
import json
from django.contrib.auth import get_user_model
from knowledge.models import Module
from knowledge.services import create_module
from oauth.tokens import issue_access_token
from organizations.models import Role
from organizations.services import add_membership, create_organization
organization = create_organization(slug="acme", name="Acme")
user = get_user_model().objects.create_user(username="{EMAIL}", email="{EMAIL}", password="{PASSWORD}")
add_membership(user=user, organization=organization, role=Role.MEMBER)
create_module(organization=organization, title="Forklift safety", sections=[("Intro", "Welcome.")])
token = issue_access_token(
    user_id=user.pk, organization_id=str(organization.pk), client_id="faults", scopes=["mcp:operator.read"],
    expires_in=3600,
)
print(json.dumps({{"user_id": user.pk, "organization_id": str(organization.pk), "token": token,
                  "module_table": Module._meta.db_table}}))
"""
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class FaultTestCase(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        require_fault_servers()
        quiet_loggers(cls.addClassCleanup, *HTTP_CLIENT_LOGGERS)
        workdir = Path(tempfile.mkdtemp(prefix="operator-faults-"))
        workdir.chmod(0o755)  # the cluster's own user must reach its folder
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        cls.workdir = workdir
        cls.postgres = PrivatePostgres(workdir)
        cls.addClassCleanup(cls.postgres.stop)
        cls.postgres.create()
        cls.redis = PrivateRedis(workdir)
        cls.addClassCleanup(cls.redis.stop)
        cls.redis.start()
        cls.smtp = SmtpServer()
        cls.smtp.start()
        cls.addClassCleanup(cls.smtp.stop)
        port = free_port()
        cls.base_url = f"http://127.0.0.1:{port}"
        (workdir / "var").mkdir()
        cls.environment = server_environment(
            cls.base_url,
            OPERATOR_VAR_DIR=str(workdir / "var"),
            DATABASE_URL=cls.postgres.url,
            REDIS_URL=cls.redis.url,
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=str(cls.smtp.port),
            OPERATOR_TOOL_CONCURRENCY=str(SLOTS),
            OPERATOR_TOOL_LEASE_SECONDS=str(LEASE_SECONDS),
            # The bursts below are about faults, not rates.
            OPERATOR_TOOL_CALLS_PER_MINUTE="100000",
            OPERATOR_SIGN_IN_ATTEMPTS_PER_MINUTE="1000",
            OPERATOR_HEADLESS_REGISTRATIONS_PER_HOUR="1000",
            OPERATOR_HEADLESS_COMPLETIONS_PER_HOUR="1000",
        )
        manage("migrate", "--noinput", environment=cls.environment)
        seeded = manage("shell", "-c", SEED, environment=cls.environment)
        cls.seed = json.loads(seeded.stdout.strip().splitlines()[-1])
        # Eight threads a worker: four calls held in one worker still leave it free threads.
        cls.gunicorn = start_gunicorn(
            cls, environment=cls.environment, port=port, log=workdir / "gunicorn.log", workers=2, threads=8
        )

    # --- requests ------------------------------------------------------------------------

    def call_tool(self, client: httpx.Client, name: str = TOOL, *, base_url: str | None = None) -> httpx.Response:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": CLIENT_META},
        }
        headers = {"Authorization": f"Bearer {self.seed['token']}", "Mcp-Method": "tools/call", "Mcp-Name": name}
        return client.post(f"{base_url or self.base_url}/api/mcp/operator", json=message, headers=headers)

    @staticmethod
    def outcome(response: httpx.Response) -> str:
        """`ok`, a tool error code, `unavailable` (JSON-RPC 503), or `bad:…` for anything undocumented.

        Never asserts: it runs in traffic threads, where a failed assertion would vanish.
        """
        seen = describe(response)
        body = seen["body"]
        if seen["status"] == 200 and body and "result" in body:
            error = body["result"]["structuredContent"].get("error") if body["result"].get("isError") else None
            if error is None:
                return "ok"
            if error["code"] == ErrorCode.TEMPORARILY_UNAVAILABLE and error["retryAfterSeconds"] < 1:
                return "bad:retryAfterSeconds"
            return error["code"]
        if seen["status"] == 503 and body and body["error"]["code"] == JSONRPC_TEMPORARILY_UNAVAILABLE:
            return "unavailable" if seen["retry_after"] == str(OUTAGE_RETRY_AFTER_SECONDS) else "bad:Retry-After"
        return f"bad:{seen['status']}:{seen['content_type']}"

    def traffic(self, tool: str, outcomes: list[tuple[float, str]], stop: threading.Event, deadline: float) -> None:
        with httpx.Client(timeout=30) as client:
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    outcome = self.outcome(self.call_tool(client, tool))
                except httpx.TransportError as failure:
                    outcome = f"bad:transport:{type(failure).__name__}"
                outcomes.append((time.monotonic(), outcome))

    def wait_until(self, condition: Any, *, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"not reached within {seconds} s")
            time.sleep(0.05)


def all_ok_since(outcomes: list[tuple[float, str]], *, after: float, count: int) -> bool:
    recent = [outcome for moment, outcome in list(outcomes) if moment > after][-count:]
    return len(recent) == count and set(recent) == {"ok"}
