"""A real headless Chromium signs in, chooses an organization and allows
(docs/authentication.md#3-consent-and-the-organization-chooser).

Debian's chromium driven by Playwright (no browser download). The redirect back
to the client is intercepted inside the browser, so no client needs to listen.
The live server serves the static files too, so the page is styled as in production.
Saves a screenshot of the consent page to test-artifacts/consent.png.
"""

import os
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import requests
from django.conf import settings
from django.contrib.staticfiles.testing import StaticLiveServerTestCase

from oauth.tokens import verify_access_token
from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_organization, make_user
from tests.flows.support import live_base_url_settings
from tests.oauth.support import REDIRECT_URI, pkce_pair
from tests.support import CHROMIUM_ARGS, require_chromium

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"


class BrowserConsentTests(StaticLiveServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # Playwright's sync API runs an event loop in this thread; the ORM calls of
        # the test itself stay synchronous and in this thread.
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        super().setUpClass()

    def setUp(self) -> None:
        self.chromium = require_chromium()
        self.overrides = live_base_url_settings(self.live_server_url)
        self.overrides.enable()
        self.addCleanup(self.overrides.disable)
        self.erin = make_user(email="erin@multi.test")
        self.acme = make_organization(slug="acme", name="Acme")
        self.globex = make_organization(slug="globex", name="Globex")
        make_membership(user=self.erin, organization=self.acme, role=Role.MEMBER)
        make_membership(user=self.erin, organization=self.globex, role=Role.ADMIN)

    def register_client(self) -> str:
        response = requests.post(
            f"{self.live_server_url}/api/auth/oauth2/register",
            json={
                "client_name": "Browser Test Agent",
                "redirect_uris": [REDIRECT_URI],
                "token_endpoint_auth_method": "none",
            },
            timeout=10,
        )
        self.assertEqual(response.status_code, 201)
        return response.json()["client_id"]

    def test_erin_chooses_globex_and_the_token_is_bound_to_it(self) -> None:
        from playwright.sync_api import sync_playwright

        client_id = self.register_client()
        verifier, challenge = pkce_pair()
        query = (
            requests.Request(
                "GET",
                f"{self.live_server_url}/api/auth/oauth2/authorize",
                params={
                    "response_type": "code",
                    "client_id": client_id,
                    "redirect_uri": REDIRECT_URI,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "scope": "mcp:operator.read",
                    "state": "browser-state",
                },
            )
            .prepare()
            .url
        )
        ARTIFACTS.mkdir(exist_ok=True)

        with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=self.chromium, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = context.pages[0] if context.pages else context.new_page()
                page.route(f"{REDIRECT_URI}**", lambda route: route.fulfill(status=200, body="client callback"))
                page.goto(query)
                page.fill("input[name=email]", self.erin.email)
                page.fill("input[name=password]", PASSWORD)
                page.click("button[type=submit]")
                page.wait_for_selector("#consent")

                self.assertIn("Browser Test Agent", page.inner_text("h1"))
                labels = page.locator("label.choice").all_inner_texts()
                self.assertEqual([label.strip() for label in labels], ["Acme", "Globex"])
                page.check("input[data-slug=globex]")
                page.screenshot(path=str(ARTIFACTS / "consent.png"), full_page=True)
                with page.expect_request(lambda request: request.url.startswith(REDIRECT_URI)) as callback:
                    page.click("button[name=allow]")
                callback_url = callback.value.url
            finally:
                context.close()

        params = parse_qs(urlsplit(callback_url).query)
        self.assertEqual(params["state"], ["browser-state"])
        token = requests.post(
            f"{self.live_server_url}/api/auth/oauth2/token",
            data={
                "grant_type": "authorization_code",
                "code": params["code"][0],
                "redirect_uri": REDIRECT_URI,
                "client_id": client_id,
                "code_verifier": verifier,
            },
            timeout=10,
        )
        self.assertEqual(token.status_code, 200, token.text)
        self.assertEqual(verify_access_token(token.json()["access_token"]).organization_id, str(self.globex.pk))
        self.assertTrue((ARTIFACTS / "consent.png").exists())
