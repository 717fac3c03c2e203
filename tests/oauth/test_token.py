import base64
import hashlib
import time
from datetime import timedelta

import jwt
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from oauth.models import AccessToken, Grant, RefreshToken
from oauth.tokens import ORGANIZATION_CLAIM, key_id, verify_access_token
from organizations.models import Membership, Role
from tests.factories import make_membership, make_user
from tests.oauth.support import REDIRECT_URI, REVOKE, OAuthTestCase


class CodeExchangeTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.membership = make_membership(role=Role.MEMBER)
        self.sign_in(self.membership.user)

    def assertOAuthError(self, response, error: str) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], error)

    def test_code_and_verifier_give_an_org_bound_jwt_and_a_refresh_token(self) -> None:
        response = self.exchange(self.client_id, self.authorize(self.client_id))

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Cache-Control"], "no-store")
        body = response.json()
        self.assertEqual(body["token_type"], "Bearer")
        self.assertEqual(body["expires_in"], 3600)
        self.assertEqual(body["scope"], "mcp:operator.read")
        self.assertTrue(body["refresh_token"])
        claims = verify_access_token(body["access_token"])
        self.assertEqual(claims.organization_id, str(self.membership.organization.pk))
        self.assertEqual(claims.user_id, self.membership.user.pk)
        self.assertEqual(claims.client_id, self.client_id)

    def test_access_token_is_an_rfc_9068_jwt(self) -> None:
        token = self.tokens_for(self.client_id)["access_token"]

        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
        self.assertEqual(header["typ"], "at+jwt")
        self.assertEqual(header["kid"], key_id(settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"]))
        self.assertEqual(claims["iss"], "http://testserver/api/auth")
        self.assertEqual(claims["aud"], "http://testserver/api/mcp/operator")
        self.assertEqual(claims["exp"] - claims["iat"], 3600)
        self.assertEqual(claims[ORGANIZATION_CLAIM], str(self.membership.organization.pk))
        for claim in ("sub", "jti", "client_id", "scope"):
            self.assertIn(claim, claims)

    def test_stored_tokens_carry_the_jwt_checksum_and_the_organization(self) -> None:
        body = self.tokens_for(self.client_id)

        access = AccessToken.objects.get()
        refresh = RefreshToken.objects.get()
        self.assertEqual(access.token_checksum, hashlib.sha256(body["access_token"].encode()).hexdigest())
        self.assertEqual(access.token, "")
        self.assertEqual(refresh.token, "")
        self.assertEqual(access.organization, self.membership.organization)
        self.assertEqual(refresh.organization, self.membership.organization)

    def test_stored_access_token_expires_in_one_hour(self) -> None:
        self.tokens_for(self.client_id)

        access = AccessToken.objects.get()
        self.assertAlmostEqual((access.expires - timezone.now()).total_seconds(), 3600, delta=10)

    def test_no_scope_requested_gives_the_read_scope(self) -> None:
        body = self.tokens_for(self.client_id, scope=None)

        self.assertEqual(body["scope"], "mcp:operator.read")

    def test_token_without_operator_scope_can_be_minted(self) -> None:
        body = self.tokens_for(self.client_id, scope="openid email")

        self.assertEqual(set(body["scope"].split()), {"openid", "email"})
        self.assertIn("id_token", body)
        self.assertEqual(verify_access_token(body["access_token"]).scopes, frozenset({"openid", "email"}))

    def test_userinfo_answers_for_an_openid_token(self) -> None:
        body = self.tokens_for(self.client_id, scope="openid email mcp:operator.read")

        response = self.api.get("/api/auth/oauth2/userinfo", HTTP_AUTHORIZATION=f"Bearer {body['access_token']}")

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json()["email"], self.membership.user.email)
        self.assertEqual(response.json()["sub"], str(self.membership.user.pk))

    def test_operator_resource_is_accepted(self) -> None:
        response = self.exchange(self.client_id, self.authorize(self.client_id), resource=self.operator_endpoint())

        self.assertEqual(response.status_code, 200)

    def test_foreign_resource_is_refused_with_invalid_target(self) -> None:
        authorization = self.authorize(self.client_id)

        response = self.exchange(self.client_id, authorization, resource="https://elsewhere.example/api")

        self.assertOAuthError(response, "invalid_target")
        self.assertFalse(AccessToken.objects.exists())
        self.assertTrue(Grant.objects.exists())

    def test_replayed_code_is_refused_and_revokes_what_it_issued(self) -> None:
        authorization = self.authorize(self.client_id)
        first = self.exchange(self.client_id, authorization).json()

        replay = self.exchange(self.client_id, authorization)

        self.assertOAuthError(replay, "invalid_grant")
        self.assertFalse(AccessToken.objects.exists())
        self.assertIsNotNone(RefreshToken.objects.get().revoked)
        self.assertOAuthError(self.refresh(self.client_id, first["refresh_token"]), "invalid_grant")

    def test_replay_after_a_refresh_revokes_the_rotated_tokens_too(self) -> None:
        authorization = self.authorize(self.client_id)
        first = self.exchange(self.client_id, authorization).json()
        second = self.refresh(self.client_id, first["refresh_token"]).json()

        self.exchange(self.client_id, authorization)

        self.assertFalse(RefreshToken.objects.filter(revoked__isnull=True).exists())
        self.assertOAuthError(self.refresh(self.client_id, second["refresh_token"]), "invalid_grant")

    def test_wrong_verifier_is_refused(self) -> None:
        authorization = self.authorize(self.client_id)

        response = self.exchange(self.client_id, authorization, code_verifier="x" * 50)

        self.assertOAuthError(response, "invalid_grant")
        self.assertFalse(AccessToken.objects.exists())

    def test_missing_verifier_is_refused(self) -> None:
        authorization = self.authorize(self.client_id)

        response = self.exchange(self.client_id, authorization, code_verifier=None)

        self.assertOAuthError(response, "invalid_request")
        self.assertFalse(AccessToken.objects.exists())

    def test_expired_code_is_refused(self) -> None:
        authorization = self.authorize(self.client_id)
        Grant.objects.update(expires=timezone.now() - timedelta(seconds=1))

        response = self.exchange(self.client_id, authorization)

        self.assertOAuthError(response, "invalid_grant")
        self.assertFalse(AccessToken.objects.exists())

    def test_code_lives_sixty_seconds(self) -> None:
        self.authorize(self.client_id)

        lifetime = (Grant.objects.get().expires - timezone.now()).total_seconds()
        self.assertTrue(50 < lifetime <= 60, lifetime)

    def test_other_redirect_uri_is_refused(self) -> None:
        authorization = self.authorize(self.client_id)

        response = self.exchange(self.client_id, authorization, redirect_uri=REDIRECT_URI + "/other")

        self.assertOAuthError(response, "invalid_request")
        self.assertFalse(AccessToken.objects.exists())

    def test_code_of_another_client_is_refused(self) -> None:
        authorization = self.authorize(self.client_id)
        other_client = self.register()["client_id"]

        response = self.exchange(other_client, authorization)

        self.assertOAuthError(response, "invalid_grant")
        self.assertFalse(AccessToken.objects.exists())

    def test_code_is_refused_when_the_person_became_learner_before_the_exchange(self) -> None:
        authorization = self.authorize(self.client_id)
        Membership.objects.filter(pk=self.membership.pk).update(role=Role.LEARNER)

        response = self.exchange(self.client_id, authorization)

        self.assertOAuthError(response, "invalid_grant")
        self.assertFalse(AccessToken.objects.exists())


# Strict single use, as before the grace window (docs/authentication.md#refresh-tokens):
# these tests hold unchanged with the window at 0; tests/oauth/test_refresh_grace.py
# covers the window itself.
@override_settings(OPERATOR={**settings.OPERATOR, "refresh_token_grace_seconds": 0})
class RefreshTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.user = make_user()
        make_membership(user=self.user, role=Role.MEMBER)
        self.membership = make_membership(user=self.user, role=Role.ADMIN)
        self.sign_in(self.user)
        self.tokens = self.tokens_for(self.client_id, organization=self.membership.organization)

    def assertOAuthError(self, response, error: str) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], error)

    def test_refresh_rotates_and_keeps_the_organization(self) -> None:
        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(response.status_code, 200, response.content)
        body = response.json()
        self.assertNotEqual(body["refresh_token"], self.tokens["refresh_token"])
        self.assertEqual(
            verify_access_token(body["access_token"]).organization_id, str(self.membership.organization.pk)
        )
        self.assertEqual(
            set(RefreshToken.objects.filter(revoked__isnull=True).values_list("organization", flat=True)),
            {self.membership.organization.pk},
        )

    def test_organization_survives_several_refreshes(self) -> None:
        refresh_token = self.tokens["refresh_token"]
        for _ in range(3):
            body = self.refresh(self.client_id, refresh_token).json()
            refresh_token = body["refresh_token"]

        self.assertEqual(
            verify_access_token(body["access_token"]).organization_id, str(self.membership.organization.pk)
        )

    def test_refresh_token_older_than_thirty_days_is_refused(self) -> None:
        RefreshToken.objects.update(created=timezone.now() - timedelta(days=30, seconds=1))

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(AccessToken.objects.count(), 1)

    def test_refresh_token_just_under_thirty_days_old_is_accepted(self) -> None:
        RefreshToken.objects.update(created=timezone.now() - timedelta(days=29, hours=23))

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(response.status_code, 200, response.content)

    def test_refresh_keeps_the_scopes(self) -> None:
        body = self.refresh(self.client_id, self.tokens["refresh_token"]).json()

        self.assertEqual(body["scope"], "mcp:operator.read")

    def test_refresh_after_becoming_learner_is_refused(self) -> None:
        Membership.objects.filter(pk=self.membership.pk).update(role=Role.LEARNER)

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertOAuthError(response, "invalid_grant")
        # Nothing minted, and the connection ended: its access token is revoked too.
        self.assertEqual(AccessToken.objects.count(), 0)

    def test_refresh_after_removal_from_the_organization_is_refused(self) -> None:
        Membership.objects.filter(pk=self.membership.pk).delete()

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertOAuthError(response, "invalid_grant")
        # Nothing minted, and the connection ended: its access token is revoked too.
        self.assertEqual(AccessToken.objects.count(), 0)

    def test_refresh_is_not_saved_by_a_role_in_another_organization(self) -> None:
        Membership.objects.filter(pk=self.membership.pk).update(role=Role.REQUESTER)

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertOAuthError(response, "invalid_grant")

    def test_reused_rotated_refresh_token_revokes_the_family(self) -> None:
        rotated = self.refresh(self.client_id, self.tokens["refresh_token"]).json()

        reuse = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertOAuthError(reuse, "invalid_grant")
        self.assertFalse(RefreshToken.objects.filter(revoked__isnull=True).exists())
        self.assertOAuthError(self.refresh(self.client_id, rotated["refresh_token"]), "invalid_grant")

    def test_revoked_refresh_token_is_refused(self) -> None:
        revoke = self.api.post(
            REVOKE,
            {"token": self.tokens["refresh_token"], "token_type_hint": "refresh_token", "client_id": self.client_id},
        )
        self.assertEqual(revoke.status_code, 200)

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertOAuthError(response, "invalid_grant")
        self.assertFalse(RefreshToken.objects.filter(revoked__isnull=True).exists())

    def test_revocation_leaves_the_issued_jwt_cryptographically_valid(self) -> None:
        self.api.post(REVOKE, {"token": self.tokens["refresh_token"], "client_id": self.client_id})

        claims = verify_access_token(self.tokens["access_token"])

        self.assertGreater(claims.expires_at, time.time())

    def test_foreign_resource_on_refresh_is_refused(self) -> None:
        response = self.refresh(self.client_id, self.tokens["refresh_token"], resource="https://elsewhere.example/")

        self.assertOAuthError(response, "invalid_target")
        self.assertIsNone(RefreshToken.objects.get().revoked)

    def test_refresh_by_another_client_is_refused(self) -> None:
        other_client = self.register()["client_id"]

        response = self.refresh(other_client, self.tokens["refresh_token"])

        self.assertOAuthError(response, "invalid_grant")

    def test_unknown_refresh_token_is_refused(self) -> None:
        response = self.refresh(self.client_id, "not-a-refresh-token")

        self.assertOAuthError(response, "invalid_grant")


class ConfidentialClientTests(OAuthTestCase):
    def test_confidential_client_authenticates_with_basic_auth(self) -> None:
        registered = self.register(token_endpoint_auth_method="client_secret_basic")
        self.sign_in(make_membership(role=Role.MEMBER).user)
        authorization = self.authorize(registered["client_id"])
        credentials = base64.b64encode(f"{registered['client_id']}:{registered['client_secret']}".encode()).decode()

        response = self.api.post(
            "/api/auth/oauth2/token",
            {
                "grant_type": "authorization_code",
                "code": authorization.code,
                "redirect_uri": REDIRECT_URI,
                "code_verifier": authorization.verifier,
            },
            HTTP_AUTHORIZATION=f"Basic {credentials}",
        )

        self.assertEqual(response.status_code, 200, response.content)

    def test_confidential_client_without_its_secret_is_refused(self) -> None:
        registered = self.register(token_endpoint_auth_method="client_secret_post")
        self.sign_in(make_membership(role=Role.MEMBER).user)
        authorization = self.authorize(registered["client_id"])

        response = self.exchange(registered["client_id"], authorization)

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.json()["error"], "invalid_client")
        self.assertFalse(AccessToken.objects.exists())

    def test_basic_client_and_a_different_body_client_id_are_invalid_client(self) -> None:
        registered = self.register(token_endpoint_auth_method="client_secret_basic")
        other = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)
        authorization = self.authorize(registered["client_id"])
        credentials = base64.b64encode(f"{registered['client_id']}:{registered['client_secret']}".encode()).decode()

        response = self.api.post(
            "/api/auth/oauth2/token",
            {
                "grant_type": "authorization_code",
                "code": authorization.code,
                "redirect_uri": REDIRECT_URI,
                "client_id": other,
                "code_verifier": authorization.verifier,
            },
            HTTP_AUTHORIZATION=f"Basic {credentials}",
        )

        self.assertEqual(response.status_code, 401, response.content)
        self.assertEqual(response.json()["error"], "invalid_client")
        self.assertEqual(response["WWW-Authenticate"], 'Basic realm="http://testserver/api/auth"')
        self.assertFalse(AccessToken.objects.exists())
