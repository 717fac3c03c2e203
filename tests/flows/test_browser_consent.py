"""A real headless Chromium signs in, chooses an organization and allows
(docs/authentication.md#3-consent-and-the-organization-chooser), under the
pages' Content-Security-Policy: any violation Chromium reports on the console
fails the test, and so does a redirect to the client that the policy blocks.

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
from tests.support import CHROMIUM_ARGS, require_chromium, sync_playwright

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"


# How Chromium words a CSP violation on the console ("Refused to load the stylesheet ...
# because it violates the following Content Security Policy directive: ...").
CSP_VIOLATION_MARKERS = ("Content Security Policy", "Content-Security-Policy")
CALLBACK_TIMEOUT_MS = 15_000


def csp_violations(console: list[str]) -> list[str]:
    return [text for text in console if any(marker in text for marker in CSP_VIOLATION_MARKERS)]


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
        from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

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
                console: list[str] = []
                page.on("console", lambda message: console.append(message.text))
                page.route(f"{REDIRECT_URI}**", lambda route: route.fulfill(status=200, body="client callback"))
                sign_in = page.goto(query)
                self.assertIn("default-src 'none'", sign_in.headers["content-security-policy"])
                page.fill("input[name=email]", self.erin.email)
                page.click("button[type=submit]")  # the email first; no provider serves multi.test
                page.fill("input[name=password]", PASSWORD)
                with page.expect_response(lambda response: "/oauth2/authorize?" in response.url) as consent:
                    page.click("button[type=submit]")
                page.wait_for_selector("#consent")
                self.assertIn("form-action 'self'", consent.value.headers["content-security-policy"])
                # The stylesheet, a static file under the CSP, loaded and applies. The element can be
                # in the page before the stylesheet is; the load event waits for it.
                page.wait_for_load_state("load")
                radius = page.eval_on_selector(".card", "card => getComputedStyle(card).borderTopLeftRadius")
                self.assertEqual(radius, "12px")

                self.assertIn("Browser Test Agent", page.inner_text("h1"))
                labels = page.locator("label.choice").all_inner_texts()
                self.assertEqual([label.strip() for label in labels], ["Acme", "Globex"])
                page.check("input[data-slug=globex]")
                page.screenshot(path=str(ARTIFACTS / "consent.png"), full_page=True)
                try:
                    with page.expect_request(
                        lambda request: request.url.startswith(REDIRECT_URI), timeout=CALLBACK_TIMEOUT_MS
                    ) as callback:
                        page.click("button[name=allow]")
                except PlaywrightTimeoutError:
                    self.fail(f"Allow never reached the client; CSP violations: {csp_violations(console)}")
                callback_url = callback.value.url
                # The code's redirect tells the client nothing of the consent page (no-referrer).
                self.assertIsNone(callback.value.headers.get("referer"))
            finally:
                context.close()
        self.assertEqual(csp_violations(console), [])

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

    def test_the_other_pages_load_without_a_csp_violation(self) -> None:
        pages = {
            "/docs/versioning": "body",  # the documentation page's stylesheet: body max-width 46rem
            "/admin/login/": "#container",
            f"/api/auth/oauth2/authorize?client_id=no-such-client&redirect_uri={REDIRECT_URI}": ".card",
            "/no-such-page": "h1",
        }
        with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=self.chromium, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = context.pages[0] if context.pages else context.new_page()
                console: list[str] = []
                page.on("console", lambda message: console.append(message.text))
                for path, selector in pages.items():
                    response = page.goto(f"{self.live_server_url}{path}")
                    self.assertIn("default-src 'none'", response.headers["content-security-policy"], path)
                    page.wait_for_selector(selector)
                page.goto(f"{self.live_server_url}/docs/versioning")
                # The docs layout comes from the stylesheet: it loaded and applies.
                max_width = page.eval_on_selector("main", "main => getComputedStyle(main).maxWidth")
                self.assertNotEqual(max_width, "none")
            finally:
                context.close()
        self.assertEqual(csp_violations(console), [])
