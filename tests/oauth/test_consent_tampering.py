"""Deny checks the client and the redirect URI exactly as Allow does (RFC 6749 §4.1.2.1).

The consent form carries the authorization request in hidden fields. A person
who edits them gets the error page whichever button they press: never a
redirect to a URI the client did not register, and never an audit row naming a
client the page did not show.
"""

from typing import Any

from audit.models import AuditAction, AuditEvent
from oauth.models import Grant
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import AUTHORIZE, OAuthTestCase, pkce_pair

PHISHING_URI = "https://evil.example/phish"


class ConsentTamperingTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register(client_name="Shown Agent")["client_id"]
        self.membership = make_membership(role=Role.MEMBER)
        self.sign_in(self.membership.user)

    def submit_consent(self, *, allow: bool, **edits: str) -> Any:
        """GET the consent page, change hidden fields by `edits`, press Allow or Deny."""
        page = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))
        self.assertEqual(page.status_code, 200, page.content[:500])
        form = {key: value for key, value in page.context["form"].initial.items() if value is not None}
        form["organization"] = str(self.membership.organization.pk)
        form.update(edits)
        form["allow" if allow else "deny"] = "true" if allow else "1"
        return self.browser.post(AUTHORIZE, form)

    def assertRefusedWithThePage(self, response: Any) -> None:
        self.assertEqual(response.status_code, 400, response.content[:500])
        self.assertNotIn("Location", response)
        self.assertTemplateUsed(response, "oauth/error.html")
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.AUTHORIZATION).exists())
        self.assertFalse(Grant.objects.exists())

    def test_deny_with_a_tampered_redirect_uri_shows_the_error_page(self) -> None:
        response = self.submit_consent(allow=False, redirect_uri=PHISHING_URI)

        self.assertRefusedWithThePage(response)
        self.assertContains(response, PHISHING_URI, status_code=400)

    def test_allow_with_a_tampered_redirect_uri_shows_the_same_page(self) -> None:
        response = self.submit_consent(allow=True, redirect_uri=PHISHING_URI)

        self.assertRefusedWithThePage(response)

    def test_deny_for_a_tampered_client_id_records_no_client_and_does_not_redirect(self) -> None:
        unseen = self.register(client_name="Never Shown", redirect_uris=[PHISHING_URI])["client_id"]

        response = self.submit_consent(allow=False, client_id=unseen)

        self.assertRefusedWithThePage(response)
        self.assertFalse(AuditEvent.objects.filter(client_id=unseen).exists())

    def test_deny_for_an_unknown_client_id_is_refused_without_a_record(self) -> None:
        response = self.submit_consent(allow=False, client_id="no-such-client")

        self.assertEqual(response.status_code, 400)
        self.assertNotIn("Location", response)
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.AUTHORIZATION).exists())

    def test_untouched_deny_still_returns_access_denied_to_the_client(self) -> None:
        response = self.submit_consent(allow=False)

        self.assertEqual(response.status_code, 302)
        self.assertIn("error=access_denied", response["Location"])
        self.assertTrue(response["Location"].startswith(self.authorize_params(self.client_id, "")["redirect_uri"]))
        event = AuditEvent.objects.get(action=AuditAction.AUTHORIZATION)
        self.assertEqual(event.client_id, self.client_id)
