"""Shared plumbing for the docs endpoint tests: real requests through the test client."""

from typing import Any

from django.core.cache import cache
from django.test import TestCase

from tests.mcp_requests import CLIENT_META, DOCS_PATH, envelope, post_mcp
from tests.support import validate_against_mcp_schema


class DocsEndpointTestCase(TestCase):
    def setUp(self) -> None:
        # Every test starts with fresh per-IP counters.
        cache.clear()

    def rpc(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: dict[str, str | None] | None = None,
        meta: dict[str, Any] | None = CLIENT_META,
        request_id: int = 1,
    ) -> Any:
        """POST one JSON-RPC request with the routing headers a correct client sends (a `None` header: left out)."""
        headers = headers or {}
        return post_mcp(
            self.client,
            envelope(method, params, request_id=request_id, meta=meta),
            path=DOCS_PATH,
            headers={name: value for name, value in headers.items() if value is not None},
            omit=tuple(name for name, value in headers.items() if value is None),
        )

    def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool; assert a valid CallToolResultResponse and return its result."""
        response = self.rpc("tools/call", {"name": name, "arguments": arguments})
        self.assertEqual(response.status_code, 200)
        body = response.json()
        validate_against_mcp_schema(body, "CallToolResultResponse")
        return body["result"]
