"""Every page that answers an outage answers 503 with `Retry-After`, as the API paths do.

docs/operations.md#outages is the policy. The finding (issue 34's soak): it
counted the authorization page's HTML 503s, and every page that can meet an
outage is pinned here: the authorization and consent pages, the return from an
identity provider, the admin's sign-in, the password reset page and the
site's other pages. As in tests/operator_site/test_outages.py, a Redis outage
is real (a loopback port nobody listens on) and a database outage is the
`OperationalError` of a restarting PostgreSQL, raised by the path's query.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_user
from tests.oauth.support import AUTHORIZE, OAuthTestCase, pkce_pair
from tests.operator_site.test_outages import RESTARTING, OutageTestCase, unreachable_redis

ADMIN_SIGN_IN = "/admin/login/"
PASSWORD_RESET = "/account/password-reset/"
PROVIDER_CALLBACK = "/api/auth/sso/callback"


class PageOutageTestCase(OutageTestCase):
    def assert_outage_page(self, response: Any) -> None:
        self.assertEqual(response.status_code, 503)
        self.assert_retry_after(response)
        self.assertTrue(response["Content-Type"].startswith("text/html"), response["Content-Type"])
        self.assertContains(response, "unavailable", status_code=503)


class AuthorizationPageOutageTests(PageOutageTestCase, OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

    def test_the_authorization_page_meeting_a_database_outage_is_its_page_with_retry_after(self) -> None:
        params = self.authorize_params(self.client_id, pkce_pair()[1])

        with mock.patch("oauth.views.eligible_organizations", side_effect=RESTARTING):
            response = self.browser.get(AUTHORIZE, params)

        self.assert_outage_page(response)

    def test_the_authorization_page_while_redis_is_away_is_its_page_with_retry_after(self) -> None:
        params = self.authorize_params(self.client_id, pkce_pair()[1])

        with unreachable_redis():
            response = self.browser.get(AUTHORIZE, params)

        self.assert_outage_page(response)

    def test_a_consent_meeting_a_database_outage_is_the_page_with_retry_after(self) -> None:
        with mock.patch("oauth.views.require_eligible_organization", side_effect=RESTARTING):
            response, _verifier = self.consent(self.client_id)

        self.assert_outage_page(response)

    def test_the_return_from_an_identity_provider_meeting_a_database_outage_is_a_page_with_retry_after(
        self,
    ) -> None:
        with mock.patch("oauth.sign_in_views.complete_sign_in", side_effect=RESTARTING):
            response = self.browser.get(PROVIDER_CALLBACK, {"state": "s", "code": "c"})

        self.assert_outage_page(response)


class OtherPageOutageTests(PageOutageTestCase):
    def test_the_admin_sign_in_while_redis_is_away_is_its_page_with_retry_after(self) -> None:
        with unreachable_redis():
            response = self.client.post(ADMIN_SIGN_IN, {"username": make_user().email, "password": PASSWORD})

        self.assert_outage_page(response)

    def test_the_admin_sign_in_meeting_a_database_outage_is_a_page_with_retry_after(self) -> None:
        with mock.patch("accounts.backends.EmailBackend.authenticate", side_effect=RESTARTING):
            response = self.client.post(ADMIN_SIGN_IN, {"username": make_user().email, "password": PASSWORD})

        self.assert_outage_page(response)

    def test_a_password_reset_while_redis_is_away_is_its_page_with_retry_after(self) -> None:
        with unreachable_redis():
            response = self.client.post(PASSWORD_RESET, {"email": make_user().email})

        self.assert_outage_page(response)

    def test_a_page_meeting_a_database_outage_is_a_page_with_retry_after(self) -> None:
        self.client.force_login(make_membership(role=Role.ADMIN).user)

        with mock.patch("site_pages.views.administered_organizations", side_effect=RESTARTING):
            response = self.client.get("/")

        self.assert_outage_page(response)

    def test_a_bug_on_a_page_is_still_djangos_server_error(self) -> None:
        self.client.force_login(make_membership(role=Role.ADMIN).user)

        with (
            mock.patch("site_pages.views.administered_organizations", side_effect=RuntimeError("a bug")),
            self.assertRaisesMessage(RuntimeError, "a bug"),
        ):
            self.client.get("/")
