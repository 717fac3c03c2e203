"""The per-IP request limit of the docs endpoint (docs/docs-server.md#rate-limit)."""

from django.conf import settings
from django.test import override_settings

from operator_core.errors import ErrorCode
from tests.mcp_docs.base import DocsEndpointTestCase
from tests.support import pinned_clock, validate_against_mcp_schema

LIMIT = 3


@override_settings(OPERATOR={**settings.OPERATOR, "docs_calls_per_minute": LIMIT})
class DocsRateLimitTests(DocsEndpointTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.enterContext(pinned_clock())  # every request of a test in one window

    def test_requests_up_to_the_limit_are_served(self) -> None:
        statuses = [self.rpc("tools/list").status_code for _ in range(LIMIT)]

        self.assertEqual(statuses, [200] * LIMIT)

    def test_request_over_the_limit_is_refused_with_429_and_retry_after(self) -> None:
        for _ in range(LIMIT):
            self.rpc("tools/list")

        response = self.rpc("tools/list")

        self.assertEqual(response.status_code, 429)
        self.assertGreaterEqual(int(response["Retry-After"]), 1)
        self.assertLessEqual(int(response["Retry-After"]), 60)
        body = response.json()
        validate_against_mcp_schema(body, "JSONRPCErrorResponse")
        self.assertEqual(body["error"]["data"]["code"], ErrorCode.RATE_LIMITED)
        self.assertEqual(body["error"]["data"]["retryAfterSeconds"], int(response["Retry-After"]))

    def test_limit_is_counted_per_ip_address(self) -> None:
        for _ in range(LIMIT + 1):
            self.rpc("tools/list")

        response = self.client.post("/api/mcp/docs", "{}", content_type="application/json", REMOTE_ADDR="192.0.2.7")

        self.assertNotEqual(response.status_code, 429)

    def test_refusal_carries_no_version_headers(self) -> None:
        for _ in range(LIMIT):
            self.rpc("tools/list")

        response = self.rpc("tools/list")

        self.assertNotIn("Deprecation", response)
