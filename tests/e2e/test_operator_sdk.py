"""End to end with the official MCP Python SDK 2.3 against a live server.

The SDK's OAuth client provider starts from the endpoint's 401, discovers the
protected-resource and authorization-server metadata, registers dynamically,
runs PKCE (the redirect handler below signs in and consents through the real
pages), and its `Client` then discovers the server, lists and calls the five
tools and reads the server card. A 2025-11-25 `initialize` is refused with
-32022.
"""

import asyncio
import json

import httpx
import httpx2
from django.test import LiveServerTestCase
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from examples.operator_client import MemoryTokenStorage
from organizations.models import Role
from tests.e2e.browser_flow import post_forms_until_redirect
from tests.e2e.sdk_oauth import live_origin_settings, public_client_provider
from tests.factories import PASSWORD, make_membership, make_module, make_organization, make_source, make_user, token_for
from tests.mcp_requests import legacy_initialize
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers

REDIRECT_URI = "http://127.0.0.1:53682/callback"
EXPECTED_TOOLS = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"]


def _leaves(group: BaseExceptionGroup) -> list:
    leaves = []
    for exception in group.exceptions:
        leaves.extend(_leaves(exception) if isinstance(exception, BaseExceptionGroup) else [exception])
    return leaves


class OperatorSdkTests(LiveServerTestCase):
    host = "127.0.0.1"

    def setUp(self) -> None:
        quiet_loggers(self.addCleanup, *HTTP_CLIENT_LOGGERS)
        base = self.live_server_url
        self.endpoint = f"{base}/api/mcp/operator"
        self.enterContext(live_origin_settings(base))
        self.organization = make_organization(slug="acme", name="Acme")
        self.membership = make_membership(
            role=Role.MEMBER, user=make_user(email="bob@acme.test"), organization=self.organization
        )
        self.module = make_module(organization=self.organization, title="Forklift safety")
        self.source = make_source(
            organization=self.organization,
            title="Warehouse handbook",
            text="Forklift drivers complete safety training before their first shift.\n\n"
            "Inspections happen every morning.",
        )

    def provider(self, storage: MemoryTokenStorage) -> OAuthClientProvider:
        async def authorize(authorization_url: str) -> dict[str, str]:
            with httpx.Client(timeout=30) as browser:
                return post_forms_until_redirect(
                    browser, authorization_url, redirect_uri=REDIRECT_URI, email="bob@acme.test", password=PASSWORD
                )

        return public_client_provider(
            self.endpoint, storage, client_name="SDK end-to-end test", redirect_uri=REDIRECT_URI, authorize=authorize
        )

    async def run_session(self, storage: MemoryTokenStorage) -> dict:
        async with (
            httpx2.AsyncClient(auth=self.provider(storage), timeout=30) as http,
            Client(streamable_http_client(self.endpoint, http_client=http)) as client,
        ):
            tools = await client.list_tools()
            arguments = {
                "list_modules": {},
                "get_module": {"moduleId": str(self.module.id)},
                "list_sources": {},
                "search_knowledge": {"query": "forklift training"},
                "fetch_knowledge": {"sourceId": str(self.source.id)},
            }
            calls = {name: await client.call_tool(name, arguments[name]) for name in EXPECTED_TOOLS}
            card = await client.read_resource("mcp://server-card.json")
            return {
                "protocol_version": client.protocol_version,
                "server_info": client.server_info,
                "capabilities": client.server_capabilities,
                "tools": tools,
                "calls": calls,
                "card": card,
            }

    def test_sdk_signs_in_discovers_lists_calls_and_reads_the_card(self) -> None:
        storage = MemoryTokenStorage()

        outcome = asyncio.run(self.run_session(storage))

        self.assertEqual(outcome["protocol_version"], "2026-07-28")
        self.assertEqual(outcome["server_info"].name, "service-operator")
        self.assertIsNotNone(outcome["capabilities"].tools)
        self.assertEqual([tool.name for tool in outcome["tools"].tools], EXPECTED_TOOLS)
        for name, result in outcome["calls"].items():
            self.assertFalse(result.is_error, name)
            self.assertEqual(result.structured_content["organization"]["slug"], "acme", name)
        self.assertEqual(outcome["calls"]["get_module"].structured_content["module"]["title"], "Forklift safety")
        search = outcome["calls"]["search_knowledge"].structured_content
        self.assertTrue(search["success"])
        self.assertEqual(search["results"][0]["sourceId"], str(self.source.id))
        (contents,) = outcome["card"].contents
        self.assertEqual(json.loads(contents.text)["tools"][0]["name"], "list_modules")
        self.assertIsNotNone(storage.client_info)
        self.assertIn("mcp:operator.read", storage.tokens.scope.split())

    def test_2025_initialize_is_refused_with_supported_versions(self) -> None:
        token = token_for(self.membership, client_id="sdk-legacy-test", expires_in=600)

        errors: list[MCPError] = []

        async def connect_legacy() -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                try:
                    async with Client(streamable_http_client(self.endpoint, http_client=http), mode="legacy"):
                        pass
                except* MCPError as group:
                    errors.extend(_leaves(group))

        asyncio.run(connect_legacy())

        (error,) = errors
        self.assertEqual(error.error.code, -32022)
        self.assertEqual(error.error.data["supported"], ["2026-07-28"])

    def test_2025_initialize_is_answered_400_on_the_wire(self) -> None:
        token = token_for(self.membership, client_id="sdk-legacy-test", expires_in=600)
        response = httpx.post(
            self.endpoint,
            json=legacy_initialize(request_id=0),
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        )

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], -32022)
        self.assertEqual(response.json()["error"]["data"]["supported"], ["2026-07-28"])
