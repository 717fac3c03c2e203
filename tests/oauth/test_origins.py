"""Grants and tokens stay bound to the origin that issued them (RFC 8707; docs/authentication.md).

Two origins share this test's database: the default one (`http://testserver`)
and another, switched on with the settings `OPERATOR_BASE_URL` would give it.
A code or refresh token issued at one is refused at the other's token
endpoint with `invalid_grant`, and stays usable where it was issued.
tests/flows/test_two_origins.py runs the same with two live servers.
"""

from oauth.models import AccessToken, Grant, RefreshToken
from organizations.models import Role
from tests.factories import make_membership
from tests.flows.support import live_base_url_settings
from tests.oauth.support import OAuthTestCase

OTHER_ORIGIN = "https://other.example"
OTHER_ENDPOINT = f"{OTHER_ORIGIN}/api/mcp/operator"
HERE_ENDPOINT = "http://testserver/api/mcp/operator"


class OriginBindingTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

    def assert_invalid_grant(self, response) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], "invalid_grant")

    def test_grant_and_tokens_store_the_endpoint_of_their_origin(self) -> None:
        with live_base_url_settings(OTHER_ORIGIN):
            self.authorize(self.client_id)
            self.assertEqual(Grant.objects.get().resource, [OTHER_ENDPOINT])
            self.tokens_for(self.client_id)

        self.assertEqual(AccessToken.objects.get().resource, [OTHER_ENDPOINT])
        self.assertEqual(RefreshToken.objects.get().resource, [OTHER_ENDPOINT])

    def test_code_of_another_origin_is_invalid_grant_and_stays_usable_there(self) -> None:
        with live_base_url_settings(OTHER_ORIGIN):
            authorization = self.authorize(self.client_id)

        refused = self.exchange(self.client_id, authorization)
        with live_base_url_settings(OTHER_ORIGIN):
            redeemed = self.exchange(self.client_id, authorization)

        self.assert_invalid_grant(refused)
        self.assertEqual(redeemed.status_code, 200, redeemed.content)

    def test_code_of_another_origin_is_refused_even_naming_this_origin_as_resource(self) -> None:
        with live_base_url_settings(OTHER_ORIGIN):
            authorization = self.authorize(self.client_id)

        response = self.exchange(self.client_id, authorization, resource=HERE_ENDPOINT)

        self.assert_invalid_grant(response)
        self.assertFalse(AccessToken.objects.exists())

    def test_refresh_token_of_another_origin_is_invalid_grant_and_stays_usable_there(self) -> None:
        with live_base_url_settings(OTHER_ORIGIN):
            tokens = self.tokens_for(self.client_id)

        refused = self.refresh(self.client_id, tokens["refresh_token"])
        with live_base_url_settings(OTHER_ORIGIN):
            refreshed = self.refresh(self.client_id, tokens["refresh_token"])

        self.assert_invalid_grant(refused)
        self.assertEqual(refreshed.status_code, 200, refreshed.content)

    def test_refresh_token_stored_without_a_resource_is_invalid_grant(self) -> None:
        tokens = self.tokens_for(self.client_id)
        RefreshToken.objects.update(resource=[])

        response = self.refresh(self.client_id, tokens["refresh_token"])

        self.assert_invalid_grant(response)

    def test_rotated_tokens_keep_the_endpoint_of_their_origin(self) -> None:
        tokens = self.tokens_for(self.client_id)

        self.refresh(self.client_id, tokens["refresh_token"])

        self.assertEqual(RefreshToken.objects.get(revoked__isnull=True).resource, [HERE_ENDPOINT])

    def test_the_endpoint_with_a_trailing_slash_names_the_same_resource(self) -> None:
        response = self.exchange(
            self.client_id, self.authorize(self.client_id), resource=f"{self.operator_endpoint()}/"
        )

        self.assertEqual(response.status_code, 200, response.content)

    def test_userinfo_refuses_an_access_token_of_another_origin(self) -> None:
        with live_base_url_settings(OTHER_ORIGIN):
            tokens = self.tokens_for(self.client_id, scope="openid email")

        response = self.api.get("/api/auth/oauth2/userinfo", HTTP_AUTHORIZATION=f"Bearer {tokens['access_token']}")

        self.assertEqual(response.status_code, 401)
