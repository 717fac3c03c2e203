"""Bearer enforcement on /api/mcp/operator (docs/errors.md; docs/development/decisions.md#bearer-authentication)."""

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from django.conf import settings
from django.test import TestCase, override_settings

from oauth.tokens import ALGORITHM, key_id, verify_access_token
from operator_core.scopes import SCOPE_OPERATOR_WRITE
from organizations.models import Role
from tests.factories import make_membership, make_user, token_for
from tests.mcp_requests import OPERATOR_PATH, envelope, post_mcp

RESOURCE_METADATA = 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/api/mcp/operator"'
SCOPE_PARAM = 'scope="mcp:operator.read"'
OTHER_ORIGIN = "https://other.example"


def signed_like(token: str, **extra_claims: object) -> str:
    """Re-sign a real token's claims plus `extra_claims` with the issuer's real key."""
    claims = jwt.decode(token, options={"verify_signature": False})
    pem = settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"]
    return jwt.encode(
        {**claims, **extra_claims}, pem, algorithm=ALGORITHM, headers={"typ": "at+jwt", "kid": key_id(pem)}
    )


class OperatorAuthTestCase(TestCase):
    def discover(self, **kwargs):
        return post_mcp(self.client, envelope("server/discover"), **kwargs)

    def assert_unauthorized(self, response, *, error: str | None) -> None:
        self.assertEqual(response.status_code, 401)
        challenge = response["WWW-Authenticate"]
        self.assertTrue(challenge.startswith("Bearer "), challenge)
        self.assertIn(RESOURCE_METADATA, challenge)
        self.assertIn(SCOPE_PARAM, challenge)
        if error is None:
            self.assertNotIn("error=", challenge)
        else:
            self.assertIn(f'error="{error}"', challenge)
        body = response.json()
        self.assertEqual(body["error"], error or "invalid_request")
        self.assertIn("error_description", body)
        self.assertNotIn("jsonrpc", body)


class MissingCredentialTests(OperatorAuthTestCase):
    def test_post_without_token_is_challenged(self) -> None:
        response = self.discover()

        self.assert_unauthorized(response, error=None)

    def test_get_without_token_is_challenged_not_405(self) -> None:
        response = self.client.get(OPERATOR_PATH)

        self.assert_unauthorized(response, error=None)

    def test_delete_without_token_is_challenged_not_405(self) -> None:
        response = self.client.delete(OPERATOR_PATH)

        self.assert_unauthorized(response, error=None)

    def test_session_cookie_is_not_a_credential(self) -> None:
        membership = make_membership(role=Role.ADMIN)
        self.client.force_login(membership.user)

        response = self.discover()

        self.assert_unauthorized(response, error=None)

    def test_refusal_sets_no_session_cookie(self) -> None:
        response = self.discover()

        self.assertNotIn(settings.SESSION_COOKIE_NAME, response.cookies)


class AcceptedTokenTests(OperatorAuthTestCase):
    def test_member_token_is_accepted(self) -> None:
        token = token_for(make_membership(role=Role.MEMBER))

        response = self.discover(token=token)

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json()["result"]["serverInfo"]["name"], "service-operator")

    def test_write_scope_alone_is_accepted(self) -> None:
        token = token_for(make_membership(), scopes=(SCOPE_OPERATOR_WRITE,))

        response = self.discover(token=token)

        self.assertEqual(response.status_code, 200)

    def test_scheme_is_case_insensitive(self) -> None:
        token = token_for(make_membership())

        response = self.discover(headers={"Authorization": f"bearer {token}"})

        self.assertEqual(response.status_code, 200)

    def test_authentication_costs_one_query(self) -> None:
        token = token_for(make_membership())

        with self.assertNumQueries(1):
            response = self.discover(token=token)

        self.assertEqual(response.status_code, 200)

    def test_authenticated_get_is_405(self) -> None:
        token = token_for(make_membership())

        response = self.client.get(OPERATOR_PATH, headers={"Authorization": f"Bearer {token}"})

        self.assertEqual(response.status_code, 405)
        self.assertEqual(response["Allow"], "POST, OPTIONS")

    def test_authenticated_delete_is_405(self) -> None:
        token = token_for(make_membership())

        response = self.client.delete(OPERATOR_PATH, headers={"Authorization": f"Bearer {token}"})

        self.assertEqual(response.status_code, 405)
        self.assertEqual(response["Allow"], "POST, OPTIONS")

    def test_accepted_request_sets_no_session_cookie(self) -> None:
        token = token_for(make_membership())

        response = self.discover(token=token)

        self.assertEqual(response.cookies, {})


class RefusedTokenTests(OperatorAuthTestCase):
    def test_garbage_token_is_invalid_token(self) -> None:
        response = self.discover(token="not-a-jwt")

        self.assert_unauthorized(response, error="invalid_token")

    def test_expired_token_is_invalid_token(self) -> None:
        token = token_for(make_membership(), expires_in=-120)

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_minted_for_another_origin_is_refused(self) -> None:
        membership = make_membership()
        other = {
            **settings.OPERATOR,
            "base_url": OTHER_ORIGIN,
            "issuer": f"{OTHER_ORIGIN}/api/auth",
            "operator_endpoint_url": f"{OTHER_ORIGIN}/api/mcp/operator",
        }
        with override_settings(OPERATOR=other):
            token = token_for(membership)
            verify_access_token(token)  # valid where it was minted

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_for_another_audience_on_this_origin_is_refused(self) -> None:
        token = signed_like(token_for(make_membership()), aud="http://testserver/api/mcp/docs")

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")

    def test_sender_constrained_token_with_cnf_is_refused(self) -> None:
        token = signed_like(token_for(make_membership()), cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"})

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_without_at_jwt_type_is_refused(self) -> None:
        claims = jwt.decode(token_for(make_membership()), options={"verify_signature": False})
        pem = settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"]
        token = jwt.encode(claims, pem, algorithm=ALGORITHM, headers={"typ": "JWT", "kid": key_id(pem)})

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")

    def test_dpop_scheme_is_refused(self) -> None:
        token = token_for(make_membership())

        response = self.discover(headers={"Authorization": f"DPoP {token}", "DPoP": "proof"})

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_in_query_string_is_refused(self) -> None:
        token = token_for(make_membership())

        response = post_mcp(self.client, envelope("server/discover"), path=f"{OPERATOR_PATH}?access_token={token}")

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_in_query_string_is_refused_even_beside_a_header(self) -> None:
        token = token_for(make_membership())

        response = post_mcp(
            self.client, envelope("server/discover"), path=f"{OPERATOR_PATH}?access_token={token}", token=token
        )

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_in_form_body_is_refused(self) -> None:
        token = token_for(make_membership())

        response = self.client.post(
            OPERATOR_PATH, data=f"access_token={token}", content_type="application/x-www-form-urlencoded"
        )

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_in_multipart_body_is_refused(self) -> None:
        token = token_for(make_membership())

        response = self.client.post(OPERATOR_PATH, data={"access_token": token})

        self.assert_unauthorized(response, error="invalid_token")

    def test_inactive_person_is_refused(self) -> None:
        membership = make_membership(user=make_user(is_active=False))

        response = self.discover(token=token_for(membership))

        self.assert_unauthorized(response, error="invalid_token")

    def test_person_who_no_longer_exists_is_refused(self) -> None:
        membership = make_membership()
        token = token_for(membership)
        type(membership.user).objects.filter(pk=membership.user.pk).delete()

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")

    def test_token_signed_by_an_unknown_key_is_refused(self) -> None:
        stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        claims = jwt.decode(token_for(make_membership()), options={"verify_signature": False})
        token = jwt.encode(claims, stranger, algorithm=ALGORITHM, headers={"typ": "at+jwt", "kid": "stranger"})

        response = self.discover(token=token)

        self.assert_unauthorized(response, error="invalid_token")


class ScopeTests(OperatorAuthTestCase):
    def test_token_without_operator_scope_is_403_insufficient_scope(self) -> None:
        token = token_for(make_membership(), scopes=("openid", "profile"))

        response = self.discover(token=token)

        self.assertEqual(response.status_code, 403)
        challenge = response["WWW-Authenticate"]
        self.assertIn('error="insufficient_scope"', challenge)
        self.assertIn(SCOPE_PARAM, challenge)
        self.assertIn(RESOURCE_METADATA, challenge)
        self.assertEqual(response.json()["error"], "insufficient_scope")
