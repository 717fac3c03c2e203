"""The connections pages show a connection the organization's provider granted as such (docs/managing-connections.md).

An ID-JAG grant has no consent here and no refresh token: the connection is the
person's live access tokens of that client and provider.
"""

from typing import Any

from django.test import Client

from oauth.models import AccessToken
from operator_core.scopes import SCOPE_OPERATOR_READ
from organizations.models import Role
from tests.factories import PASSWORD, make_membership
from tests.identity_providers.test_id_jag_grant import IdJagGrantTestCase

MINE = "/account/connections/"


class ProviderGrantedConnectionTests(IdJagGrantTestCase):
    def setUp(self) -> None:
        super().setUp()
        response = self.present(self.id_jag(), scope=SCOPE_OPERATOR_READ)
        self.assertEqual(response.status_code, 200, response.content)
        self.page = Client()

    def assert_granted_by_provider(self, response: Any) -> None:
        self.assertEqual(response.status_code, 200)
        (row,) = response.context["rows"]
        self.assertEqual((row.client_id, row.person_email), (self.client_id, self.bob.email))
        self.assertEqual(row.granted_by_issuer, self.live_provider.issuer)
        self.assertEqual(row.scopes, [SCOPE_OPERATOR_READ])
        self.assertIsNone(row.last_refresh_at)
        self.assertContains(response, "Granted by Acme's identity provider")
        self.assertContains(response, self.live_provider.issuer)

    def test_the_person_sees_the_connection_as_granted_by_the_organization_provider(self) -> None:
        self.assertTrue(self.page.login(username=self.bob.email, password=PASSWORD))
        self.assert_granted_by_provider(self.page.get(MINE))

    def test_the_organization_admin_sees_the_connection_as_granted_by_its_provider(self) -> None:
        admin = make_membership(role=Role.ADMIN, organization=self.acme).user
        self.assertTrue(self.page.login(username=admin.email, password=PASSWORD))
        self.assert_granted_by_provider(self.page.get(f"/organizations/{self.acme.slug}/connections/"))

    def test_the_connection_is_gone_once_its_last_token_expired(self) -> None:
        AccessToken.objects.update(expires=AccessToken.objects.get().created)
        self.assertTrue(self.page.login(username=self.bob.email, password=PASSWORD))
        self.assertEqual(self.page.get(MINE).context["rows"], [])
