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
