"""Client secrets are stored as keyed digests; secrets stored by DOT as password hashes keep working
(docs/development/decisions.md#client-secrets). bench/client_secret.py measures the CPU a wrong one costs."""

import base64
from unittest import mock

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.test import override_settings

from oauth import services
from oauth.client_secrets import DIGEST_PREFIX, client_secret_digest
from oauth.models import Application
from tests.oauth.support import REVOKE, OAuthTestCase

SECRET = "s" * 64


def _basic(client_id: str, secret: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()}


class ClientSecretTests(OAuthTestCase):
    def revoke_as(self, client_id: str, secret: str):
        return self.api.post(REVOKE, {"token": "anything"}, headers=_basic(client_id, secret))

    def confidential_client(self, *, stored: str) -> Application:
        application = Application.objects.create(
            name="Confidential",
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="https://client.example/callback",
            client_secret=stored,
        )
        application.refresh_from_db()
        return application

    def test_a_registered_secret_is_stored_as_its_keyed_digest(self) -> None:
        registered = self.register(token_endpoint_auth_method="client_secret_basic")

        stored = Application.objects.get(client_id=registered["client_id"]).client_secret
        self.assertTrue(stored.startswith(DIGEST_PREFIX))
        self.assertEqual(stored, client_secret_digest(registered["client_secret"]))
        self.assertEqual(self.revoke_as(registered["client_id"], registered["client_secret"]).status_code, 200)

    def test_a_wrong_secret_is_refused_without_the_password_hasher(self) -> None:
        application = self.confidential_client(stored=SECRET)

        with mock.patch.object(services, "check_password", side_effect=AssertionError("PBKDF2 used")):
            response = self.revoke_as(application.client_id, "wrong")

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.json()["error"], "invalid_client")

    def test_a_pbkdf2_secret_authenticates_once_and_is_rehashed(self) -> None:
        application = self.confidential_client(stored=make_password(SECRET, hasher="pbkdf2_sha256"))
        self.assertTrue(application.client_secret.startswith("pbkdf2_sha256$"))

        first = self.revoke_as(application.client_id, SECRET)

        self.assertEqual(first.status_code, 200)
        application.refresh_from_db()
        self.assertEqual(application.client_secret, client_secret_digest(SECRET))
        with mock.patch.object(services, "check_password", side_effect=AssertionError("PBKDF2 used")):
            self.assertEqual(self.revoke_as(application.client_id, SECRET).status_code, 200)

    def test_a_wrong_secret_leaves_a_pbkdf2_hash_as_it_was(self) -> None:
        legacy = make_password(SECRET, hasher="pbkdf2_sha256")
        application = self.confidential_client(stored=legacy)

        self.assertEqual(self.revoke_as(application.client_id, "wrong").status_code, 401)

        application.refresh_from_db()
        self.assertEqual(application.client_secret, legacy)

    def test_a_digest_under_a_retired_secret_key_still_verifies_and_moves_to_the_new_key(self) -> None:
        application = self.confidential_client(stored=client_secret_digest(SECRET))
        old_key = settings.SECRET_KEY

        with override_settings(SECRET_KEY="a-new-secret-key-" + "n" * 40, SECRET_KEY_FALLBACKS=[old_key]):
            self.assertEqual(self.revoke_as(application.client_id, SECRET).status_code, 200)
            application.refresh_from_db()
            self.assertEqual(application.client_secret, client_secret_digest(SECRET))
        self.assertNotEqual(application.client_secret, client_secret_digest(SECRET))
