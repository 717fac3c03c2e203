"""HEAD is answered wherever GET is (RFC 9110 §9.3.2): same status and headers, no body."""

from django.test import TestCase

# Every path that answers GET, whatever it answers: a page, a document, a redirect to sign in, a 401.
GET_PATHS = [
    "/",
    "/auth.md",
    "/docs/",
    "/docs/tools",
    "/docs/versioning",
    "/.well-known/mcp",
    "/.well-known/mcp/server-card.json",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/api/auth",
    "/api/auth/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/api/auth",
    "/api/auth/.well-known/openid-configuration",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/api/mcp/operator",
    "/.well-known/jwks.json",
    "/api/auth/jwks",
    "/api/auth/sign-in",
    "/api/auth/oauth2/authorize",
    "/api/auth/oauth2/userinfo",
    "/admin/",
    "/healthz",
    "/readyz",
    "/healthz/dependencies",
]


class HeadRequestTests(TestCase):
    def test_head_answers_like_get_without_a_body(self) -> None:
        for path in GET_PATHS:
            with self.subTest(path=path):
                get = self.client.get(path)
                head = self.client.head(path)

                self.assertNotIn(get.status_code, (404, 405), path)
                self.assertEqual(head.status_code, get.status_code, path)
                self.assertEqual(head.get("Content-Type"), get.get("Content-Type"), path)
                self.assertEqual(head.content, b"", path)
