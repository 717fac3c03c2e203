"""Browser-page middleware runs on pages and is skipped on the MCP endpoints."""

from django.test import TestCase

from tests.factories import make_membership, token_for
from tests.mcp_requests import envelope, post_mcp

SIGN_IN = "/api/auth/sign-in"


class PagesOnlyMiddlewareTests(TestCase):
    def test_pages_keep_frame_denial_and_sessions(self) -> None:
        response = self.client.get(SIGN_IN)

        self.assertEqual(response["X-Frame-Options"], "DENY")
        self.assertIn("csrftoken", response.cookies)
        self.assertTrue(hasattr(response.wsgi_request, "session"))

    def test_mcp_endpoint_builds_no_session_user_or_messages(self) -> None:
        token = token_for(make_membership())

        response = post_mcp(self.client, envelope("tools/list"), token=token)

        self.assertEqual(response.status_code, 200)
        request = response.wsgi_request
        self.assertFalse(hasattr(request, "session"))
        self.assertFalse(hasattr(request, "user"))
        self.assertFalse(hasattr(request, "_messages"))
        self.assertNotIn("X-Frame-Options", response)
