"""Shared plumbing for the docs endpoint tests: real requests through the test client."""

import json
from typing import Any

from django.core.cache import cache
from django.test import TestCase

from tests.support import validate_against_mcp_schema

ENDPOINT = "/api/mcp/docs"
REVISION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientInfo": {"name": "docs-tests", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
# The header that names the entity of a method, and where the body holds it.
NAMED = {"tools/call": "name", "resources/read": "uri"}


class DocsEndpointTestCase(TestCase):
    def setUp(self) -> None:
        # Every test starts with fresh per-IP counters.
        cache.clear()

    def rpc(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
        meta: dict[str, Any] | None = META,
        request_id: int = 1,
    ) -> Any:
        """POST one JSON-RPC request with the routing headers a correct client sends."""
        body_params = dict(params or {})
        if meta is not None:
            body_params["_meta"] = meta
        sent = {"Mcp-Method": method}
        if method in NAMED:
            sent["Mcp-Name"] = str(body_params.get(NAMED[method], ""))
        sent.update(headers or {})
        return self.client.post(
            ENDPOINT,
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": body_params}),
            content_type="application/json",
            headers={name: value for name, value in sent.items() if value is not None},
        )

    def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool; assert a valid CallToolResultResponse and return its result."""
        response = self.rpc("tools/call", {"name": name, "arguments": arguments})
        self.assertEqual(response.status_code, 200)
        body = response.json()
        validate_against_mcp_schema(body, "CallToolResultResponse")
        return body["result"]
