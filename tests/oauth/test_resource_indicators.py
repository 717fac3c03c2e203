"""`resource` (RFC 8707) as hosts send it: the endpoint URL with a query string or a trailing slash.

A host may derive `resource` from the URL the person configured, query string
included, as Claude Code was reported to. Such a value names the operator
endpoint at the authorization endpoint, on the consent page's answer, at the
code exchange and on refresh; what is stored on the grant and tokens, and the
access token's `aud`, is the canonical endpoint URL, so the binding to the
issuing origin (tests/oauth/test_origins.py) holds as before. Another origin or
another path is still `invalid_target`, and changes nothing.
"""

from urllib.parse import parse_qs, urlsplit

import jwt

from oauth.models import AccessToken, Grant, RefreshToken
from organizations.models import Role
from tests.factories import make_membership
from tests.mcp_requests import envelope, post_mcp
from tests.oauth.support import AUTHORIZE, OAuthTestCase, pkce_pair

CANONICAL = "http://testserver/api/mcp/operator"
WITH_QUERY = f"{CANONICAL}?utm_source=x"
# Values that differ from the endpoint by more than a query string or a trailing slash.
OTHER_RESOURCES = {
    "another origin": "https://elsewhere.example/api/mcp/operator",
    "another origin, with a query": "https://elsewhere.example/api/mcp/operator?utm_source=x",
    "another port": "http://testserver:8443/api/mcp/operator",
    "another scheme": "https://testserver/api/mcp/operator",
    "the docs endpoint": "http://testserver/api/mcp/docs?utm_source=x",
    "a longer path": "http://testserver/api/mcp/operator/extra",
    "a path sharing the prefix": "http://testserver/api/mcp/operatorx?utm_source=x",
    "the endpoint in the query": "http://testserver/?next=/api/mcp/operator",
    "a fragment": f"{CANONICAL}#section",
    "whitespace in the query": f"{CANONICAL}?utm_source=a b",
}


class ResourceWithQueryStringTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

    def test_a_query_string_resource_yields_a_working_token_for_the_canonical_url(self) -> None:
        authorization = self.authorize(self.client_id, resource=WITH_QUERY)
        response = self.exchange(self.client_id, authorization, resource=WITH_QUERY)

        self.assertEqual(response.status_code, 200, response.content)
        access_token = response.json()["access_token"]
        self.assertEqual(jwt.decode(access_token, options={"verify_signature": False})["aud"], CANONICAL)
        call = post_mcp(
            self.client, envelope("tools/call", {"name": "list_modules", "arguments": {}}), token=access_token
        )
        self.assertEqual(call.status_code, 200, call.content)
        self.assertNotIn("isError", call.json()["result"])

    def test_what_is_stored_is_the_canonical_url(self) -> None:
        authorization = self.authorize(self.client_id, resource=WITH_QUERY)

        self.assertEqual(Grant.objects.get().resource, [CANONICAL])
        self.exchange(self.client_id, authorization, resource=WITH_QUERY)
        self.assertEqual(AccessToken.objects.get().resource, [CANONICAL])
        self.assertEqual(RefreshToken.objects.get().resource, [CANONICAL])

    def test_the_consent_page_carries_the_resource_as_sent(self) -> None:
        page = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1], resource=WITH_QUERY))

        self.assertEqual(page.status_code, 200)
        self.assertEqual(page.context["form"].initial["resource"], WITH_QUERY)

    def test_a_refresh_naming_the_query_string_resource_rotates_for_the_canonical_url(self) -> None:
        tokens = self.tokens_for(self.client_id, resource=WITH_QUERY)

        response = self.refresh(self.client_id, tokens["refresh_token"], resource=WITH_QUERY)

        self.assertEqual(response.status_code, 200, response.content)
        claims = jwt.decode(response.json()["access_token"], options={"verify_signature": False})
        self.assertEqual(claims["aud"], CANONICAL)
        self.assertEqual(RefreshToken.objects.get(revoked__isnull=True).resource, [CANONICAL])

    def test_a_trailing_slash_and_a_query_string_together_name_the_endpoint(self) -> None:
        resource = f"{CANONICAL}/?utm_source=x"
        authorization = self.authorize(self.client_id, resource=resource)

        response = self.exchange(self.client_id, authorization, resource=resource)

        self.assertEqual(response.status_code, 200, response.content)


class OtherResourceTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

    def assertInvalidTarget(self, response) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], "invalid_target")

    def test_the_authorization_endpoint_redirects_with_invalid_target(self) -> None:
        for case, resource in OTHER_RESOURCES.items():
            with self.subTest(case):
                params = self.authorize_params(self.client_id, pkce_pair()[1], resource=resource)
                response = self.browser.get(AUTHORIZE, params)

                self.assertEqual(response.status_code, 302)
                self.assertEqual(parse_qs(urlsplit(response["Location"]).query)["error"], ["invalid_target"])
        self.assertFalse(Grant.objects.exists())

    def test_the_code_exchange_is_invalid_target_and_issues_nothing(self) -> None:
        for case, resource in OTHER_RESOURCES.items():
            with self.subTest(case):
                authorization = self.authorize(self.client_id, resource=WITH_QUERY)

                self.assertInvalidTarget(self.exchange(self.client_id, authorization, resource=resource))
        self.assertFalse(AccessToken.objects.exists())

    def test_a_refresh_is_invalid_target_and_keeps_the_token(self) -> None:
        tokens = self.tokens_for(self.client_id)
        for case, resource in OTHER_RESOURCES.items():
            with self.subTest(case):
                self.assertInvalidTarget(self.refresh(self.client_id, tokens["refresh_token"], resource=resource))
        self.assertEqual(RefreshToken.objects.filter(revoked__isnull=True).count(), 1)
        self.assertEqual(self.refresh(self.client_id, tokens["refresh_token"]).status_code, 200)
