"""Which clients may present an ID-JAG, and how one registers for nothing else.

docs/authentication.md#enterprise-managed-authorization: a client registered by
RFC 7591 for the JWT bearer grant alone needs no redirect URI and can never use
/authorize; a public client is refused the grant; a Redis outage while the
`jti` is spent refuses it too.
"""

import json
from typing import Any
from unittest import mock

from django.core.cache.backends.redis import RedisCache
from django.test import Client

from identity_providers import id_jag
from oauth.models import AccessToken, Application
from operator_core.errors import OUTAGE_RETRY_AFTER_SECONDS
from operator_core.scopes import SCOPE_OPERATOR_READ
from tests.factories import PASSWORD
from tests.identity_providers.test_id_jag_grant import JWT_BEARER, IdJagGrantTestCase
from tests.live_servers import free_port
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, REGISTER, pkce_pair


class JwtBearerOnlyRegistrationTests(IdJagGrantTestCase):
    def register_raw(self, **metadata: Any) -> Any:
        body = {"client_name": "Headless Enterprise Agent", "grant_types": [JWT_BEARER], **metadata}
        return self.api.post(REGISTER, data=json.dumps(body), content_type="application/json")

    def test_a_client_for_the_jwt_bearer_grant_alone_registers_without_redirect_uris_and_gets_tokens(self) -> None:
        response = self.register_raw(token_endpoint_auth_method="client_secret_post")

        self.assertEqual(response.status_code, 201, response.content)
        registered = response.json()
        self.assertEqual(registered["grant_types"], [JWT_BEARER])
        self.assertEqual((registered["redirect_uris"], registered["response_types"]), ([], []))
        self.assertTrue(registered["client_secret"])
        self.client_id, self.client_secret = registered["client_id"], registered["client_secret"]
        granted = self.present(self.id_jag(), scope=SCOPE_OPERATOR_READ)
        self.assertEqual(granted.status_code, 200, granted.content)

    def test_such_a_client_can_never_use_authorize(self) -> None:
        registered = self.register_raw()
        self.assertEqual(registered.status_code, 201, registered.content)
        client_id = registered.json()["client_id"]
        _, challenge = pkce_pair()
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s",
            "scope": SCOPE_OPERATOR_READ,
        }
        browser = Client()
        self.assertTrue(browser.login(username=self.bob.email, password=PASSWORD))

        response = browser.get(AUTHORIZE, query)

        # No consent page and no redirect with a code: the client registered no redirect-based flow.
        self.assertEqual(response.status_code, 400, response.content[:300])
        self.assertNotIn("form", response.context or {})
        self.assertNotIn("code=", response.get("Location", ""))
        self.assertEqual(Application.objects.get(client_id=client_id).redirect_uris, "")

    def test_redirect_uris_refresh_tokens_or_response_types_are_refused_for_such_a_client(self) -> None:
        cases = [
            ({"redirect_uris": [REDIRECT_URI]}, "invalid_redirect_uri"),
            ({"grant_types": [JWT_BEARER, "refresh_token"]}, "invalid_client_metadata"),
            ({"response_types": ["code"]}, "invalid_client_metadata"),
        ]
        for metadata, error in cases:
            with self.subTest(metadata=metadata):
                response = self.register_raw(**metadata)
                self.assertEqual(response.status_code, 400, response.content)
                self.assertEqual(response.json()["error"], error)
                self.assertTrue(response.json()["error_description"])
        self.assertFalse(Application.objects.filter(name="Headless Enterprise Agent").exists())

    def test_a_public_client_may_not_register_for_the_jwt_bearer_grant(self) -> None:
        for grant_types in ([JWT_BEARER], ["authorization_code", JWT_BEARER]):
            with self.subTest(grant_types=grant_types):
                response = self.register_raw(
                    grant_types=grant_types, token_endpoint_auth_method="none", redirect_uris=[REDIRECT_URI]
                )
                self.assertEqual(response.status_code, 400, response.content)
                self.assertEqual(response.json()["error"], "invalid_client_metadata")

    def test_a_redirect_based_client_may_also_list_the_jwt_bearer_grant(self) -> None:
        response = self.register_raw(
            grant_types=["authorization_code", "refresh_token", JWT_BEARER], redirect_uris=[REDIRECT_URI]
        )

        self.assertEqual(response.status_code, 201, response.content)
        self.assertEqual(response.json()["grant_types"], ["authorization_code", "refresh_token", JWT_BEARER])
        self.assertEqual(response.json()["response_types"], ["code"])


class PublicClientTests(IdJagGrantTestCase):
    def test_a_public_client_presenting_an_id_jag_is_unauthorized_client(self) -> None:
        self.client_id = self.register(client_name="Public Agent")["client_id"]
        self.client_secret = ""
        response = self.present(self.id_jag())
        self.assert_refused(response, "unauthorized_client", "public_client")


class ReplayCacheOutageTests(IdJagGrantTestCase):
    def test_a_redis_outage_while_the_jti_is_spent_is_503_and_issues_nothing(self) -> None:
        # The replay cache alone is a Redis where nothing listens; the key set still comes from the usual cache.
        unreachable = RedisCache(f"redis://127.0.0.1:{free_port()}/0", {})
        assertion = self.id_jag()
        with (
            mock.patch.object(id_jag, "cache", unreachable),
            self.assertLogs("identity_providers.id_jag", "WARNING"),
            self.assertLogs("django.request", "ERROR"),
        ):
            response = self.present(assertion)

        self.assertEqual(response.status_code, 503, response.content)
        self.assertEqual(response.json()["error"], "temporarily_unavailable")
        self.assertEqual(response["Retry-After"], str(OUTAGE_RETRY_AFTER_SECONDS))
        self.assertFalse(AccessToken.objects.exists())
