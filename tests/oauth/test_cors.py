"""Browser-based clients may call the OAuth endpoints they use cross-origin, never with cookies."""

from django.test import TestCase

ORIGIN = "https://inspector.example"


class OAuthCorsTests(TestCase):
    def preflight(self, path: str):
        return self.client.options(
            path,
            HTTP_ORIGIN=ORIGIN,
            HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
            HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
        )

    def test_token_endpoint_preflight_is_permissive_without_credentials(self) -> None:
        response = self.preflight("/api/auth/oauth2/token")

        self.assertEqual(response["Access-Control-Allow-Origin"], "*")
        self.assertNotIn("Access-Control-Allow-Credentials", response)

    def test_registration_endpoint_preflight_is_permissive(self) -> None:
        response = self.preflight("/api/auth/oauth2/register")

        self.assertEqual(response["Access-Control-Allow-Origin"], "*")

    def test_authorize_page_gets_no_cors_headers(self) -> None:
        response = self.preflight("/api/auth/oauth2/authorize")

        self.assertNotIn("Access-Control-Allow-Origin", response)


METADATA_PATHS = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/api/auth",
    "/api/auth/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/api/auth",
    "/api/auth/.well-known/openid-configuration",
    "/.well-known/oauth-protected-resource/api/mcp/operator",
    "/.well-known/oauth-protected-resource",
]


class DiscoveryCorsTests(TestCase):
    def test_every_discovery_document_may_be_read_cross_origin(self) -> None:
        for path in METADATA_PATHS:
            with self.subTest(path=path):
                response = self.client.get(path, HTTP_ORIGIN=ORIGIN)

                self.assertEqual(response.status_code, 200)
                self.assertEqual(response["Access-Control-Allow-Origin"], "*")
                self.assertNotIn("Access-Control-Allow-Credentials", response)
