import json

from django.conf import settings
from django.test import TestCase

from oauth.tokens import key_id

AS_PATHS = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/api/auth",
    "/api/auth/.well-known/oauth-authorization-server",
]
OIDC_PATHS = [
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/api/auth",
    "/api/auth/.well-known/openid-configuration",
]
PRM_PATHS = ["/.well-known/oauth-protected-resource/api/mcp/operator", "/.well-known/oauth-protected-resource"]


class AuthorizationServerMetadataTests(TestCase):
    def test_all_three_paths_serve_byte_identical_documents(self) -> None:
        bodies = {self.client.get(path).content for path in AS_PATHS}

        self.assertEqual(len(bodies), 1)

    def test_issuer_and_endpoints_ignore_the_host_header(self) -> None:
        document = self.client.get(AS_PATHS[0], HTTP_HOST="localhost").json()

        self.assertEqual(document["issuer"], f"{settings.BASE_URL}/api/auth")
        self.assertEqual(document["token_endpoint"], f"{settings.BASE_URL}/api/auth/oauth2/token")

    def test_document_advertises_the_product_decisions(self) -> None:
        document = self.client.get(AS_PATHS[0]).json()
        issuer = document["issuer"]

        self.assertEqual(document["response_types_supported"], ["code"])
        self.assertEqual(document["code_challenge_methods_supported"], ["S256"])
        self.assertEqual(
            document["grant_types_supported"],
            ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        )
        self.assertEqual(
            document["token_endpoint_auth_methods_supported"], ["none", "client_secret_basic", "client_secret_post"]
        )
        self.assertTrue(document["client_id_metadata_document_supported"])
        self.assertTrue(document["authorization_response_iss_parameter_supported"])
        self.assertEqual(document["authorization_endpoint"], f"{issuer}/oauth2/authorize")
        self.assertEqual(document["registration_endpoint"], f"{issuer}/oauth2/register")
        self.assertEqual(document["revocation_endpoint"], f"{issuer}/oauth2/revoke")
        self.assertEqual(document["userinfo_endpoint"], f"{issuer}/oauth2/userinfo")
        self.assertEqual(document["jwks_uri"], f"{issuer}/jwks")
        self.assertIn("mcp:operator.read", document["scopes_supported"])
        self.assertNotIn("introspection_endpoint", document)

    def test_every_path_advertises_the_jwt_bearer_grant_and_the_id_jag_profile(self) -> None:
        for path in AS_PATHS + OIDC_PATHS:
            with self.subTest(path=path):
                document = self.client.get(path).json()
                self.assertIn("urn:ietf:params:oauth:grant-type:jwt-bearer", document["grant_types_supported"])
                self.assertEqual(
                    document["authorization_grant_profiles_supported"], ["urn:ietf:params:oauth:grant-profile:id-jag"]
                )

    def test_an_other_issuer_path_is_not_served(self) -> None:
        response = self.client.get("/.well-known/oauth-authorization-server/tenant")

        self.assertEqual(response.status_code, 404)


class OpenIDConfigurationTests(TestCase):
    def test_all_three_paths_serve_byte_identical_documents(self) -> None:
        bodies = {self.client.get(path).content for path in OIDC_PATHS}

        self.assertEqual(len(bodies), 1)

    def test_document_agrees_with_the_oauth_metadata(self) -> None:
        oidc = self.client.get(OIDC_PATHS[0]).json()
        oauth = self.client.get(AS_PATHS[0]).json()

        for key in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint", "jwks_uri"):
            self.assertEqual(oidc[key], oauth[key], key)
        self.assertEqual(oidc["code_challenge_methods_supported"], ["S256"])
        self.assertEqual(oidc["response_types_supported"], ["code"])


class ProtectedResourceMetadataTests(TestCase):
    def test_both_paths_serve_the_operator_endpoint_document(self) -> None:
        documents = [self.client.get(path).json() for path in PRM_PATHS]

        self.assertEqual(documents[0], documents[1])
        self.assertEqual(documents[0]["resource"], f"{settings.BASE_URL}/api/mcp/operator")
        self.assertEqual(documents[0]["authorization_servers"], [f"{settings.BASE_URL}/api/auth"])
        self.assertEqual(documents[0]["scopes_supported"], ["mcp:operator.read", "mcp:operator.write"])
        self.assertEqual(documents[0]["bearer_methods_supported"], ["header"])


class KeySetTests(TestCase):
    def test_issuer_jwks_publishes_the_signing_key_by_kid(self) -> None:
        keys = self.client.get("/api/auth/jwks").json()["keys"]

        kid = key_id(settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"])
        self.assertIn(kid, [key["kid"] for key in keys])
        self.assertTrue(all("d" not in key for key in keys))

    def test_lti_key_set_is_a_different_key(self) -> None:
        issuer_kids = {key["kid"] for key in self.client.get("/api/auth/jwks").json()["keys"]}
        lti_keys = json.loads(self.client.get("/.well-known/jwks.json").content)["keys"]

        self.assertEqual(len(lti_keys), 1)
        self.assertNotIn(lti_keys[0]["kid"], issuer_kids)
        self.assertNotIn("d", lti_keys[0])
