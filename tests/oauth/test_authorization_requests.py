"""Authorization requests refused before any page (redirect, client, PKCE, resource, scope), and prompt=none."""

from oauth.models import Grant
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, OAuthTestCase, pkce_pair, query_of


class AuthorizationRequestRefusalTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

    def get(self, **overrides):
        params = self.authorize_params(self.client_id, pkce_pair()[1], **overrides)
        return self.browser.get(AUTHORIZE, {key: value for key, value in params.items() if value is not None})

    def test_unregistered_redirect_uri_is_not_followed(self) -> None:
        response = self.get(redirect_uri="https://attacker.example/cb")

        self.assertEqual(response.status_code, 400)
        self.assertTemplateUsed(response, "oauth/error.html")
        self.assertFalse(response.has_header("Location"))

    def test_unknown_client_is_not_followed(self) -> None:
        response = self.browser.get(AUTHORIZE, self.authorize_params("no-such-client", pkce_pair()[1]))

        self.assertEqual(response.status_code, 400)
        self.assertFalse(response.has_header("Location"))

    def test_missing_pkce_challenge_is_refused(self) -> None:
        response = self.get(code_challenge=None, code_challenge_method=None)

        self.assertEqual(response.status_code, 302)
        query = query_of(response["Location"])
        self.assertEqual(query["error"], ["invalid_request"])
        self.assertEqual(query["iss"], ["http://testserver/api/auth"])

    def test_plain_pkce_is_refused(self) -> None:
        response = self.get(code_challenge_method="plain")

        self.assertEqual(response.status_code, 302)
        self.assertEqual(query_of(response["Location"])["error"], ["invalid_request"])

    def test_pkce_without_method_defaults_to_plain_and_is_refused(self) -> None:
        response = self.get(code_challenge_method=None)

        self.assertEqual(query_of(response["Location"])["error"], ["invalid_request"])

    def test_foreign_resource_is_refused_with_invalid_target(self) -> None:
        response = self.get(resource="https://elsewhere.example/api")

        self.assertEqual(response.status_code, 302)
        query = query_of(response["Location"])
        self.assertEqual(query["error"], ["invalid_target"])
        self.assertEqual(query["state"], ["state-123"])

    def test_loopback_redirect_may_use_any_port(self) -> None:
        response = self.get(redirect_uri="http://127.0.0.1:40123/callback")

        self.assertEqual(response.status_code, 200)

    def test_loopback_redirect_with_another_path_is_not_followed(self) -> None:
        response = self.get(redirect_uri="http://127.0.0.1:8765/other")

        self.assertEqual(response.status_code, 400)
        self.assertFalse(response.has_header("Location"))

    def test_operator_resource_is_accepted(self) -> None:
        response = self.get(resource=self.operator_endpoint())

        self.assertEqual(response.status_code, 200)

    def test_implicit_response_type_is_refused(self) -> None:
        response = self.get(response_type="token")

        self.assertEqual(response.status_code, 302)
        self.assertIn(query_of(response["Location"])["error"][0], {"unsupported_response_type", "unauthorized_client"})

    def test_unknown_scope_is_refused(self) -> None:
        response = self.get(scope="mcp:operator.admin")

        self.assertEqual(query_of(response["Location"])["error"], ["invalid_scope"])


class SilentAuthorizationTests(OAuthTestCase):
    """`prompt=none` forbids any page (OIDC Core §3.1.2.1): the client gets an error instead."""

    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        _verifier, self.challenge = pkce_pair()

    def test_signed_out_person_with_prompt_none_gets_login_required(self) -> None:
        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, self.challenge, prompt="none"))

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith(REDIRECT_URI))
        query = query_of(response["Location"])
        self.assertEqual(query["error"], ["login_required"])
        self.assertEqual(query["state"], ["state-123"])
        self.assertIn("iss", query)

    def test_signed_in_person_with_prompt_none_gets_consent_required(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)

        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, self.challenge, prompt="none"))

        self.assertEqual(response.status_code, 302)
        self.assertEqual(query_of(response["Location"])["error"], ["consent_required"])
        self.assertFalse(Grant.objects.exists())

    def test_prompt_none_with_an_unregistered_redirect_is_not_followed(self) -> None:
        params = self.authorize_params(
            self.client_id, self.challenge, prompt="none", redirect_uri="https://evil.example/cb"
        )

        response = self.browser.get(AUTHORIZE, params)

        self.assertEqual(response.status_code, 400)
