"""Governing connections in a real headless Chromium, as people would (docs/managing-connections.md).

A member connects clients through the real consent page; the member and an
organization admin then find the connections pages from the front page, see
who connected what (and no control to end a connection, which the service's
contract leaves to the client and to roles), and restrict the organization's
clients. Tokens are exchanged,
refreshed and used against the live server over HTTP. Every page must load
without a Content-Security-Policy violation, and the audit trail must record
each act without any secret. Debian's chromium driven by Playwright, as in
test_browser_consent.py; Client ID Metadata Documents are served by a local
fetcher.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
from django.conf import settings
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.test import override_settings

from audit.models import AuditAction, AuditEvent
from oauth.tokens import verify_access_token
from organizations.models import Role
from organizations.services import record_role_change
from tests.factories import PASSWORD, make_membership, make_organization, make_user
from tests.flows.support import live_base_url_settings
from tests.flows.test_browser_consent import csp_violations
from tests.mcp_requests import envelope, routing_headers
from tests.oauth.support import REDIRECT_URI, pkce_pair
from tests.support import CHROMIUM_ARGS, own_cache_keys, require_chromium, sync_playwright

CLAUDE = "https://claude.ai/oauth/client.json"
ROGUE = "https://rogue.example/oauth/client.json"
WAIT_MS = 15_000


class LocalDocuments:
    """Client ID Metadata Documents of two hosts, served from memory (CIMD_METADATA_FETCHER)."""

    names = {CLAUDE: "Claude", ROGUE: "Rogue Agent"}

    def fetch(self, client_id: str) -> tuple[dict[str, object], int]:
        document = {
            "client_id": client_id,
            "client_name": self.names[client_id],
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        }
        return document, 3600


class BrowserConnectionsTestCase(StaticLiveServerTestCase):
    """Acme (Alice admin, Bob member) and Globex (Gina admin) on a live server, and the plumbing of a browser run."""

    @classmethod
    def setUpClass(cls) -> None:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        super().setUpClass()

    def setUp(self) -> None:
        self.chromium = require_chromium()
        self.enterContext(own_cache_keys())
        overrides = live_base_url_settings(self.live_server_url)
        overrides.enable()
        self.addCleanup(overrides.disable)
        provider = {**settings.OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": f"{__name__}.LocalDocuments"}
        self.enterContext(override_settings(OAUTH2_PROVIDER=provider))
        self.acme = make_organization(slug="acme", name="Acme")
        self.globex = make_organization(slug="globex", name="Globex")
        self.alice = make_user(email="alice@acme.test")
        self.bob = make_user(email="bob@acme.test")
        self.gina = make_user(email="gina@globex.test")
        make_membership(user=self.alice, organization=self.acme, role=Role.ADMIN)
        make_membership(user=self.bob, organization=self.acme, role=Role.MEMBER)
        make_membership(user=self.gina, organization=self.globex, role=Role.ADMIN)
        self.console: list[str] = []
        self.secrets: list[str] = [PASSWORD]

    def tearDown(self) -> None:
        self.assertEqual(csp_violations(self.console), [])
        self.assert_audit_trail_holds_no_secret()
        super().tearDown()

    # --- plumbing ------------------------------------------------------------------------

    @contextmanager
    def chromium_browser(self) -> Iterator[Any]:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=self.chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                yield browser
            finally:
                browser.close()

    def new_page(self, browser: Any) -> Any:
        page = browser.new_context().new_page()
        page.set_default_timeout(WAIT_MS)
        page.on("console", lambda message: self.console.append(message.text))
        page.route(f"{REDIRECT_URI}**", lambda route: route.fulfill(status=200, body="client callback"))
        return page

    def sign_in(self, page: Any, user: Any) -> None:
        """The sign-in page's two steps: the email, then the password."""
        page.fill("input[name=email]", user.email)
        page.click("button[type=submit]")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")

    def sign_in_at_front_page(self, page: Any, user: Any) -> None:
        page.goto(f"{self.live_server_url}/api/auth/sign-in?next=/")
        self.sign_in(page, user)
        page.wait_for_selector("#manage-connections")

    def authorize_url(self, client_id: str, challenge: str, *, state: str) -> str:
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "mcp:operator.read",
            "state": state,
        }
        return f"{self.live_server_url}/api/auth/oauth2/authorize?{urlencode(query)}"

    def open_consent(self, page: Any, client_id: str, *, as_user: Any, state: str = "flow-state") -> str:
        """Go to the authorization request, signing in if asked; return the PKCE verifier."""
        verifier, challenge = pkce_pair()
        page.goto(self.authorize_url(client_id, challenge, state=state))
        if page.locator("input[name=email]").count():
            self.sign_in(page, as_user)
        page.wait_for_selector("#consent")
        return verifier

    def allow(self, page: Any) -> dict[str, list[str]]:
        with page.expect_request(lambda request: request.url.startswith(REDIRECT_URI)) as callback:
            page.click("button[name=allow]")
        return parse_qs(urlsplit(callback.value.url).query)

    def connect(self, page: Any, client_id: str, *, as_user: Any) -> dict[str, Any]:
        """Consent in the browser, then exchange the code as the client would; the token response."""
        verifier = self.open_consent(page, client_id, as_user=as_user)
        params = self.allow(page)
        return self.exchange(client_id, params["code"][0], verifier)

    def exchange(self, client_id: str, code: str, verifier: str) -> dict[str, Any]:
        body = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
        }
        response = requests.post(f"{self.live_server_url}/api/auth/oauth2/token", data=body, timeout=10)
        self.assertEqual(response.status_code, 200, response.text)
        tokens = response.json()
        self.secrets += [code, verifier, tokens["access_token"], tokens["refresh_token"]]
        return tokens

    def refresh(self, client_id: str, tokens: dict[str, Any]) -> requests.Response:
        body = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id}
        return requests.post(f"{self.live_server_url}/api/auth/oauth2/token", data=body, timeout=10)

    def register(self, name: str) -> str:
        body = {"client_name": name, "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        response = requests.post(f"{self.live_server_url}/api/auth/oauth2/register", json=body, timeout=10)
        self.assertEqual(response.status_code, 201, response.text)
        return response.json()["client_id"]

    def tool_call(self, tokens: dict[str, Any]) -> requests.Response:
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}})
        headers = {
            **routing_headers(message),
            "Authorization": f"Bearer {tokens['access_token']}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        response = requests.post(
            f"{self.live_server_url}/api/mcp/operator", data=json.dumps(message), headers=headers, timeout=10
        )
        return response

    def tool_call_status(self, tokens: dict[str, Any]) -> int:
        return self.tool_call(tokens).status_code

    def tool_call_error(self, tokens: dict[str, Any]) -> str | None:
        """The tool error's code of a call answered 200; None when the call succeeded."""
        response = self.tool_call(tokens)
        self.assertEqual(response.status_code, 200, response.text)
        result = response.json()["result"]
        return result["structuredContent"]["error"]["code"] if result.get("isError") else None

    def revoke(self, client_id: str, tokens: dict[str, Any]) -> None:
        """Revoke the refresh token as a client does when its person removes the connection (RFC 7009)."""
        body = {"token": tokens["refresh_token"], "token_type_hint": "refresh_token", "client_id": client_id}
        response = requests.post(f"{self.live_server_url}/api/auth/oauth2/revoke", data=body, timeout=10)
        self.assertEqual(response.status_code, 200, response.text)

    def assert_no_disconnect_control(self, page: Any) -> None:
        """The page's only forms are the client policy's (on an organization's page), none to end a connection."""
        actions = page.locator("main form").evaluate_all("forms => forms.map(form => form.getAttribute('action'))")
        self.assertTrue(all(action.endswith("/connections/policy") for action in actions), actions)
        self.assertEqual(page.locator("text=/disconnect/i").count(), 0)
        self.assertIn("remove", page.inner_text("#how-access-ends"))

    def assert_refused_refresh(self, client_id: str, tokens: dict[str, Any]) -> None:
        response = self.refresh(client_id, tokens)
        self.assertEqual((response.status_code, response.json()["error"]), (400, "invalid_grant"))

    def assert_audit_trail_holds_no_secret(self) -> None:
        rows = json.dumps(list(AuditEvent.objects.values()), default=str)
        for secret in self.secrets:
            self.assertNotIn(secret, rows)


class BrowserConnectionsTests(BrowserConnectionsTestCase):
    def test_a_person_sees_their_connection_which_ends_when_the_client_revokes_it(self) -> None:
        client_id = self.register("Bob's Agent")
        with self.chromium_browser() as browser:
            page = self.new_page(browser)
            tokens = self.connect(page, client_id, as_user=self.bob)
            self.assertEqual(self.tool_call_status(tokens), 200)

            page.goto(f"{self.live_server_url}/")
            page.click("#manage-connections >> text=Your connections")
            row = page.locator("#my-connections tbody tr")
            self.assertEqual(row.count(), 1)
            cells = row.locator("td").all_inner_texts()
            self.assertEqual(
                cells[:4], ["Bob's Agent", "Dynamic registration (name not verified)", "Acme", "mcp:operator.read"]
            )
            self.assert_no_disconnect_control(page)

            # Removing the connection in the AI client revokes its refresh token.
            self.revoke(client_id, tokens)
            page.reload()
            page.wait_for_selector("#no-connections")

        self.assert_refused_refresh(client_id, tokens)

    def test_an_admin_sees_a_members_connection_which_ends_when_the_member_becomes_a_learner(self) -> None:
        client_id = self.register("Bob's Agent")
        with self.chromium_browser() as browser:
            tokens = self.connect(self.new_page(browser), client_id, as_user=self.bob)
            self.assertEqual(self.tool_call_status(tokens), 200)
            admin = self.new_page(browser)
            self.sign_in_at_front_page(admin, self.alice)
            admin.click("#manage-connections >> text=Connections of Acme")
            admin.wait_for_selector("#organization-connections")
            row = admin.locator("#organization-connections tbody tr")
            self.assertEqual(row.count(), 1)
            cells = row.locator("td").all_inner_texts()
            self.assertEqual(cells[:3], ["bob@acme.test", "Bob's Agent", "Dynamic registration (name not verified)"])
            self.assertEqual(cells[4], "1")  # the tool call above
            self.assert_no_disconnect_control(admin)
            admin.screenshot(path=str(settings.BASE_DIR / "test-artifacts" / "organization-connections.png"))

        # What ends a member's access instead: a role change, applied on the next call and refresh.
        record_role_change(membership=self.bob.memberships.get(), role=Role.LEARNER, changed_by=self.alice)
        self.assert_refused_refresh(client_id, tokens)
        self.assertEqual(self.tool_call_error(tokens), "forbidden")

    def test_a_member_gets_403_and_an_admin_of_another_organization_404(self) -> None:
        with self.chromium_browser() as browser:
            member = self.new_page(browser)
            self.sign_in_at_front_page(member, self.bob)
            self.assertNotIn("Connections of Acme", member.inner_text("#manage-connections"))
            response = member.goto(f"{self.live_server_url}/organizations/acme/connections/")
            self.assertEqual(response.status, 403)
            stranger = self.new_page(browser)
            self.sign_in_at_front_page(stranger, self.gina)
            response = stranger.goto(f"{self.live_server_url}/organizations/acme/connections/")
            self.assertEqual(response.status, 404)
            self.assertNotIn("Acme", stranger.inner_text("main"))
            self.assertEqual(stranger.goto(f"{self.live_server_url}/organizations/globex/connections/").status, 200)

    def test_a_policy_of_two_clients_refuses_other_hosts_at_consent_and_refresh_while_listed_ones_connect(
        self,
    ) -> None:
        listed_client = self.register("Team Agent")
        with self.chromium_browser() as browser:
            member = self.new_page(browser)
            rogue_tokens = self.connect(member, ROGUE, as_user=self.bob)
            team_tokens = self.connect(member, listed_client, as_user=self.bob)

            admin = self.new_page(browser)
            self.sign_in_at_front_page(admin, self.alice)
            admin.click("#manage-connections >> text=Connections of Acme")
            admin.check("#client-policy input[name=mode][value=listed]")
            admin.fill("#hosts", "claude.ai")
            admin.check(f"#client-policy input[name=clients][value='{listed_client}']")
            self.assertFalse(admin.is_checked("#client-policy input[name=dynamic_clients]"))
            admin.click("#client-policy button[type=submit]")
            admin.wait_for_selector(".notice")
            self.assertIn("claude.ai", admin.inner_text("#current-policy"))
            self.assertIn("Team Agent", admin.inner_text("#current-policy"))

            # The affected person sees the change at the next refresh.
            self.assert_refused_refresh(ROGUE, rogue_tokens)
            self.assertEqual(self.refresh(listed_client, team_tokens).status_code, 200)

            self.open_consent(member, ROGUE, as_user=self.bob)
            member.click("button[name=allow]")
            member.wait_for_selector("#client-policy-refusal")
            self.assertIn("Acme does not allow this application", member.inner_text("h1"))
            self.assertIn("served by claude.ai", member.inner_text("#client-policy"))

            claude_tokens = self.connect(member, CLAUDE, as_user=self.bob)
            self.assertEqual(verify_access_token(claude_tokens["access_token"]).organization_id, str(self.acme.pk))
            self.assertEqual(self.refresh(CLAUDE, claude_tokens).status_code, 200)

        policy_change = AuditEvent.objects.get(action=AuditAction.CLIENT_POLICY_CHANGE)
        self.assertEqual(policy_change.actor_id, self.alice.pk)
        self.assertEqual(policy_change.detail["metadata_hosts"], ["claude.ai"])
        self.assertEqual(policy_change.detail["client_ids"], [listed_client])
        refusal = AuditEvent.objects.get(action=AuditAction.AUTHORIZATION, outcome="access_denied")
        self.assertEqual((refusal.client_id, refusal.detail), (ROGUE, {"reason": "client_policy"}))

    def test_the_dynamic_class_switched_off_refuses_a_dynamically_registered_client(self) -> None:
        newcomer = self.register("Claude")  # a name alone admits nothing
        with self.chromium_browser() as browser:
            admin = self.new_page(browser)
            self.sign_in_at_front_page(admin, self.alice)
            admin.goto(f"{self.live_server_url}/organizations/acme/connections/")
            admin.check("#client-policy input[name=mode][value=listed]")
            admin.fill("#hosts", "claude.ai")
            admin.click("#client-policy button[type=submit]")
            admin.wait_for_selector(".notice")

            member = self.new_page(browser)
            self.open_consent(member, newcomer, as_user=self.bob)
            member.click("button[name=allow]")
            member.wait_for_selector("#client-policy-refusal")

            admin.check("#client-policy input[name=dynamic_clients]")
            admin.click("#client-policy button[type=submit]")
            admin.wait_for_selector(".notice")
            self.assertIn("dynamically registered clients", admin.inner_text("#current-policy"))
            self.connect(member, newcomer, as_user=self.bob)

        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.CLIENT_POLICY_CHANGE).count(), 2)

    def test_use_another_account_ends_signed_in_as_the_other_person_on_the_same_request(self) -> None:
        erin = make_user(email="erin@acme.test")
        make_membership(user=erin, organization=self.acme, role=Role.MEMBER)
        client_id = self.register("Shared Laptop Agent")
        with self.chromium_browser() as browser:
            page = self.new_page(browser)
            verifier = self.open_consent(page, client_id, as_user=self.bob, state="switch-state")
            self.assertEqual(page.inner_text("#signed-in-account"), "bob@acme.test")
            consent_url = page.url

            page.click("#switch-account button")
            page.wait_for_selector("input[name=email]")
            self.sign_in(page, erin)
            page.wait_for_selector("#consent")
            self.assertEqual(page.url, consent_url)
            self.assertEqual(page.inner_text("#signed-in-account"), "erin@acme.test")
            params = self.allow(page)

        self.assertEqual(params["state"], ["switch-state"])
        tokens = self.exchange(client_id, params["code"][0], verifier)
        self.assertEqual(verify_access_token(tokens["access_token"]).user_id, erin.pk)
        granted = AuditEvent.objects.get(action=AuditAction.AUTHORIZATION)
        self.assertEqual(granted.person_id, erin.pk)
