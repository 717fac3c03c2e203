"""Single sign-on end to end: the official MCP Python SDK as the client, Debian's Chromium as the person.

The SDK's OAuth provider hands its authorization URL to Chromium (Playwright), which
enters the email, is sent to the organization's provider (tests/identity_providers/
provider_server.py, a process of its own), comes back signed in, and allows; the SDK
then lists and calls the tools. A person removed from the organization in the admin
still signs in at the provider, and gets the 403 page at consent and `forbidden` on
the next tool call: the provider proves who the person is, memberships decide the rest.
"""

import asyncio
import os
import tempfile
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from django.test import LiveServerTestCase
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client

from examples.operator_client import MemoryTokenStorage
from organizations.models import Role
from tests.e2e.sdk_oauth import public_client_provider
from tests.factories import make_membership, make_module, make_organization, make_user
from tests.flows.support import live_base_url_settings
from tests.flows.test_browser_consent import csp_violations
from tests.identity_providers.support import LiveProvider, configure_provider, provider_key
from tests.oauth.support import pkce_pair
from tests.support import CHROMIUM_ARGS, HTTP_CLIENT_LOGGERS, quiet_loggers, require_chromium, sync_playwright

REDIRECT_URI = "http://127.0.0.1:53683/callback"
EXPECTED_TOOLS = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"]
STEP_TIMEOUT_MS = 20_000


class SingleSignOnEndToEndTests(LiveServerTestCase):
    host = "127.0.0.1"

    @classmethod
    def setUpClass(cls) -> None:
        # Playwright's sync API runs in a thread of its own (the SDK's event loop owns this one).
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        super().setUpClass()
        cls.live_provider = LiveProvider(cls)

    def setUp(self) -> None:
        quiet_loggers(self.addCleanup, *HTTP_CLIENT_LOGGERS)
        self.chromium = require_chromium()
        self.enterContext(live_base_url_settings(self.live_server_url))
        self.endpoint = f"{self.live_server_url}/api/mcp/operator"
        self.enterContext(provider_key())
        self.acme = make_organization(slug="acme", name="Acme")
        configure_provider(self.acme, self.live_provider.issuer)
        self.bob = make_user(email="bob@acme.test", password="unused-by-this-test")
        self.membership = make_membership(user=self.bob, organization=self.acme, role=Role.MEMBER)
        make_module(organization=self.acme, title="Forklift safety")
        self.live_provider.person(sub="bob-at-acme", email="bob@acme.test")
        self.console: list[str] = []

    def browse(self, authorization_url: str, *, consent: bool) -> dict[str, Any]:
        """Chromium from `authorization_url` through the provider: the client's callback query, or the 403 page."""
        with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=self.chromium, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = context.pages[0] if context.pages else context.new_page()
                page.on("console", lambda message: self.console.append(message.text))
                page.route(f"{REDIRECT_URI}**", lambda route: route.fulfill(status=200, body="client callback"))
                page.goto(authorization_url)
                page.fill("input[name=email]", "bob@acme.test")
                if not consent:
                    with page.expect_response(
                        lambda response: "/api/auth/oauth2/authorize?" in response.url, timeout=STEP_TIMEOUT_MS
                    ) as refused:
                        page.click("button[type=submit]")
                    page.wait_for_selector("#return-to-application")
                    return {"status": refused.value.status, "text": page.inner_text("main")}
                page.click("button[type=submit]")
                page.wait_for_selector("#consent", timeout=STEP_TIMEOUT_MS)
                with page.expect_request(
                    lambda request: request.url.startswith(REDIRECT_URI), timeout=STEP_TIMEOUT_MS
                ) as callback:
                    page.click("button[name=allow]")
                return {key: values[0] for key, values in parse_qs(urlsplit(callback.value.url).query).items()}
            finally:
                context.close()

    def oauth(self, storage: MemoryTokenStorage) -> OAuthClientProvider:
        async def authorize(authorization_url: str) -> dict[str, str]:
            return await asyncio.to_thread(self.browse, authorization_url, consent=True)

        return public_client_provider(
            self.endpoint, storage, client_name="SSO end-to-end test", redirect_uri=REDIRECT_URI, authorize=authorize
        )

    async def session(self, storage: MemoryTokenStorage) -> tuple[list[str], Any]:
        async with (
            httpx2.AsyncClient(auth=self.oauth(storage), timeout=60) as http,
            Client(streamable_http_client(self.endpoint, http_client=http)) as client,
        ):
            tools = await client.list_tools()
            call = await client.call_tool("list_modules", {})
            return [tool.name for tool in tools.tools], call

    def remove_bob_in_the_admin(self) -> None:
        staff = make_user(email="staff@operator.test", is_staff=True, is_superuser=True)
        self.client.force_login(staff)
        response = self.client.post(f"/admin/organizations/membership/{self.membership.pk}/delete/", {"post": "yes"})
        self.assertEqual(response.status_code, 302, response.content[:500])
        self.client.logout()

    def authorization_url(self, client_id: str) -> str:
        _verifier, challenge = pkce_pair()
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "mcp:operator.read",
            "state": "after-removal",
        }
        return f"{self.live_server_url}/api/auth/oauth2/authorize?{urlencode(query)}"

    def test_a_person_signs_in_through_the_provider_and_the_sdk_lists_the_tools(self) -> None:
        storage = MemoryTokenStorage()

        tools, call = asyncio.run(self.session(storage))

        self.assertEqual(tools, EXPECTED_TOOLS)
        self.assertFalse(call.is_error)
        self.assertEqual(call.structured_content["organization"]["slug"], "acme")
        self.assertEqual(self.bob.identity_links.get().subject, "bob-at-acme")
        self.assertEqual(csp_violations(self.console), [])

    def test_a_person_removed_in_the_admin_gets_403_at_consent_and_forbidden_on_the_next_call(self) -> None:
        storage = MemoryTokenStorage()
        asyncio.run(self.session(storage))

        self.remove_bob_in_the_admin()

        _tools, call = asyncio.run(self.session(storage))  # the stored token: no new sign-in
        self.assertTrue(call.is_error)
        self.assertEqual(call.structured_content["error"]["code"], "forbidden")
        refused = self.browse(self.authorization_url(storage.client_info.client_id), consent=False)
        self.assertEqual(refused["status"], 403)
        self.assertIn("not an admin or member of any organization", refused["text"])
        self.assertEqual(csp_violations(self.console), [])
