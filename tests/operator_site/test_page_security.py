"""Every HTML page carries the Content-Security-Policy; the OAuth pages keep their URLs to themselves.

The policy is checked here on each kind of page through Django's test client;
tests/flows/test_browser_consent.py checks that Chromium runs the pages under it
without a violation.
"""

from django.conf import settings
from django.test import Client, TestCase

from operator_core.page_security import serialize_policy
from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_user
from tests.mcp_requests import envelope, post_mcp
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, OAuthTestCase, pkce_pair

CSP = "Content-Security-Policy"
SIGN_IN = "/api/auth/sign-in"
CLIENT_ORIGIN = "http://127.0.0.1:8765"
STRICT = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class PolicySettingTests(TestCase):
    def test_the_policy_is_the_strict_one_the_docs_describe(self) -> None:
        # docs/development/decisions.md, "Browser pages": a change here is a change there.
        self.assertEqual(serialize_policy(settings.SECURE_CSP), STRICT)


class PagesCarryThePolicyTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]

    def assert_strict_page(self, response, *, status: int, csp: str = STRICT) -> None:
        self.assertEqual(response.status_code, status, response.content[:300])
        self.assertTrue(response["Content-Type"].startswith("text/html"), response["Content-Type"])
        self.assertEqual(response[CSP], csp)
        self.assertEqual(response["X-Frame-Options"], "DENY")

    def test_sign_in(self) -> None:
        self.assert_strict_page(self.browser.get(SIGN_IN), status=200)

    def test_consent_also_allows_its_form_to_end_at_the_client(self) -> None:
        self.sign_in(make_membership(role=Role.MEMBER).user)

        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))

        self.assert_strict_page(
            response, status=200, csp=STRICT.replace("'self'; frame", f"'self' {CLIENT_ORIGIN}; frame")
        )

    def test_error_page(self) -> None:
        self.sign_in(make_membership(role=Role.MEMBER).user)
        params = self.authorize_params(self.client_id, pkce_pair()[1], redirect_uri="https://attacker.example/cb")

        self.assert_strict_page(self.browser.get(AUTHORIZE, params), status=400)

    def test_forbidden_page(self) -> None:
        self.sign_in(make_user())

        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))

        self.assert_strict_page(response, status=403)

    def test_csrf_failure_page_is_ours_without_inline_style(self) -> None:
        response = Client(enforce_csrf_checks=True).post(SIGN_IN, {"email": "a@example.test", "password": "x"})

        self.assert_strict_page(response, status=403)
        self.assertContains(response, "This form could not be verified", status_code=403)
        self.assertNotContains(response, "<style", status_code=403)

    def test_not_found_page(self) -> None:
        self.assert_strict_page(self.browser.get("/no-such-page"), status=404)

    def test_docs_page(self) -> None:
        response = self.browser.get("/docs/versioning", HTTP_ACCEPT="text/html")

        self.assert_strict_page(response, status=200)
        self.assertContains(response, 'href="/static/site_pages/site.css"')
        self.assertNotContains(response, "<style")

    def test_admin_login(self) -> None:
        self.assert_strict_page(self.browser.get("/admin/login/"), status=200)

    def test_json_answers_carry_it_too_but_not_the_mcp_endpoints(self) -> None:
        # Harmless on JSON; the MCP endpoints skip it with the rest of the page middleware.
        self.assertEqual(self.api.get("/.well-known/oauth-authorization-server")[CSP], STRICT)
        response = post_mcp(self.api, envelope("tools/list"), token=None)
        self.assertNotIn(CSP, response)


class SignInFormActionTests(OAuthTestCase):
    """A sign-in whose authorization request ends at the client (an error, or consent skipped) needs its origin."""

    def sign_in_page(self, **overrides: str):
        client_id = overrides.pop("client_id", None) or self.register()["client_id"]
        params = self.authorize_params(client_id, pkce_pair()[1], **overrides)
        return self.browser.get(AUTHORIZE, params, follow=True)

    def test_a_registered_redirect_uri_is_allowed(self) -> None:
        response = self.sign_in_page()

        self.assertEqual(response.request["PATH_INFO"], SIGN_IN)
        self.assertIn(f"form-action 'self' {CLIENT_ORIGIN};", response[CSP])

    def test_an_unregistered_redirect_uri_is_not(self) -> None:
        response = self.sign_in_page(redirect_uri="https://attacker.example/cb")

        self.assertIn("form-action 'self';", response[CSP])

    def test_an_unknown_client_adds_nothing(self) -> None:
        response = self.sign_in_page(client_id="no-such-client")

        self.assertIn("form-action 'self';", response[CSP])


class ReferrerPolicyTests(OAuthTestCase):
    """no-referrer on the OAuth views; strict-origin on their two form pages, whose POST needs its Origin."""

    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]

    def test_the_pages_with_a_form_send_the_origin_only(self) -> None:
        self.assertEqual(self.browser.get(SIGN_IN)["Referrer-Policy"], "strict-origin")
        self.sign_in(make_membership(role=Role.MEMBER).user)
        consent = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))
        self.assertEqual(consent["Referrer-Policy"], "strict-origin")

    def test_the_redirect_to_the_client_sends_no_referrer(self) -> None:
        self.sign_in(make_membership(role=Role.MEMBER).user)

        response, _verifier = self.consent(self.client_id)

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith(REDIRECT_URI))
        self.assertEqual(response["Referrer-Policy"], "no-referrer")

    def test_the_redirect_to_sign_in_sends_no_referrer(self) -> None:
        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))

        self.assertEqual(response.status_code, 302)
        self.assertEqual(response["Referrer-Policy"], "no-referrer")

    def test_error_and_forbidden_pages_send_no_referrer(self) -> None:
        self.sign_in(make_membership(role=Role.MEMBER).user)
        params = self.authorize_params(self.client_id, pkce_pair()[1], redirect_uri="https://attacker.example/cb")
        self.assertEqual(self.browser.get(AUTHORIZE, params)["Referrer-Policy"], "no-referrer")
        self.sign_in(make_user())
        forbidden = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))
        self.assertEqual(forbidden.status_code, 403)
        self.assertEqual(forbidden["Referrer-Policy"], "no-referrer")

    def test_the_signed_in_page_has_no_form_and_sends_no_referrer(self) -> None:
        user = make_user()

        response = self.browser.post(SIGN_IN, {"email": user.email, "password": PASSWORD})

        self.assertContains(response, "You are signed in")
        self.assertEqual(response["Referrer-Policy"], "no-referrer")

    def test_other_pages_keep_same_origin(self) -> None:
        self.assertEqual(self.browser.get("/docs/versioning")["Referrer-Policy"], "same-origin")
        self.assertEqual(self.browser.get("/admin/login/")["Referrer-Policy"], "same-origin")
