"""Two app servers with separate var/ folders, sharing one database and one Redis, are one service.

Real components end to end: two gunicorn servers built from the same
configuration (the secrets in the environment, nothing shared on disk), a
database of their own (PostgreSQL when the suite runs there) and Redis. A
person signs in and consents through server A; the token works at server B,
B refreshes it, and the tool-call limit counts calls on both together
(docs/deploy.md, "Scaling out").
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
from django.test import SimpleTestCase

from operator_core.errors import ErrorCode
from tests.flows.live_oauth import LiveOAuthClient, Person
from tests.live_servers import start_two_servers
from tests.mcp_requests import envelope, routing_headers
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers

CALLS_PER_MINUTE = 4
PASSWORD = "two-servers-password"
SEED = f"""
import django
django.setup()
from django.contrib.auth import get_user_model
from organizations.models import Role
from organizations.services import add_membership, create_organization
from knowledge.services import create_module
organization = create_organization(slug="acme", name="Acme")
user = get_user_model().objects.create_user(username="bob@acme.test", email="bob@acme.test", password="{PASSWORD}")
add_membership(user=user, organization=organization, role=Role.MEMBER)
create_module(organization=organization, title="Forklift safety", sections=[("Intro", "Welcome.")])
print(organization.pk)
"""


class TwoServersTests(SimpleTestCase):
    databases = {"default"}  # to create and drop the servers' own PostgreSQL database

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        quiet_loggers(cls.addClassCleanup, *HTTP_CLIENT_LOGGERS)
        workdir = Path(tempfile.mkdtemp(prefix="operator-two-servers-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        cls.urls, seeded = start_two_servers(
            cls, workdir, seed=SEED, OPERATOR_TOOL_CALLS_PER_MINUTE=str(CALLS_PER_MINUTE)
        )
        cls.organization_id = seeded.strip().splitlines()[-1]
        cls.var_dirs = [workdir / "var-a", workdir / "var-b"]

    def sign_in_at_a(self) -> dict[str, Any]:
        """Register, sign in, consent and exchange the code, all at server A; the token answer and client id."""
        server_a = LiveOAuthClient(self.urls["a"])
        client_id = server_a.register()
        person = Person(email="bob@acme.test", password=PASSWORD, organization_id=self.organization_id)
        return {**server_a.connect(client_id, person), "client_id": client_id}

    def call(self, server: str, token: str, method: str = "tools/list", **params: Any) -> httpx.Response:
        message = envelope(method, params)
        headers = {**routing_headers(message), "Authorization": f"Bearer {token}"}
        return httpx.post(f"{self.urls[server]}/api/mcp/operator", json=message, headers=headers, timeout=30)

    def test_a_token_minted_at_one_server_works_at_the_other(self) -> None:
        tokens = self.sign_in_at_a()

        listed = self.call("b", tokens["access_token"])

        self.assertEqual(listed.status_code, 200, listed.text)
        self.assertEqual(len(listed.json()["result"]["tools"]), 5)

    def test_the_other_server_refreshes_a_token_from_the_first(self) -> None:
        tokens = self.sign_in_at_a()

        refreshed = httpx.post(
            f"{self.urls['b']}/api/auth/oauth2/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": tokens["client_id"],
            },
            timeout=30,
        )

        self.assertEqual(refreshed.status_code, 200, refreshed.text)
        self.assertEqual(self.call("a", refreshed.json()["access_token"]).status_code, 200)

    def test_the_tool_call_limit_counts_calls_on_both_servers(self) -> None:
        token = self.sign_in_at_a()["access_token"]

        codes = []
        for server in ("a", "b", "a", "b", "a", "b"):
            result = self.call(server, token, "tools/call", name="list_modules", arguments={}).json()["result"]
            codes.append(result["structuredContent"].get("error", {}).get("code") if result.get("isError") else None)

        self.assertEqual(codes, [None] * CALLS_PER_MINUTE + [ErrorCode.RATE_LIMITED] * 2)

    def test_neither_server_wrote_a_secret_to_its_var_folder(self) -> None:
        self.assertEqual([sorted(path.iterdir()) for path in self.var_dirs], [[], []])
