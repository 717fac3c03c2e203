"""Transport rules on the docs endpoint (the shared transport, proven here too)."""

from tests.mcp_docs.base import DocsEndpointTestCase
from tests.mcp_requests import CLIENT_META, DOCS_PATH, legacy_initialize, post_mcp
from tests.support import type_arrays, validate_against_mcp_schema


class DocsTransportTests(DocsEndpointTestCase):
    def test_discover_names_the_docs_server(self) -> None:
        response = self.rpc("server/discover")

        self.assertEqual(response.status_code, 200)
        body = response.json()
        validate_against_mcp_schema(body, "DiscoverResultResponse")
        self.assertEqual(body["result"]["serverInfo"]["name"], "service-docs")
        self.assertEqual(body["result"]["supportedVersions"], ["2026-07-28"])
        self.assertEqual(body["result"]["cacheScope"], "public")

    def test_request_without_meta_is_refused_with_unsupported_protocol_version(self) -> None:
        response = self.rpc("tools/list", meta=None)

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "UnsupportedProtocolVersionError")
        self.assertEqual(body["error"]["code"], -32022)
        self.assertEqual(body["error"]["data"]["supported"], ["2026-07-28"])

    def test_initialize_handshake_is_refused_with_unsupported_protocol_version(self) -> None:
        response = post_mcp(
            self.client, legacy_initialize(version="2025-06-18"), path=DOCS_PATH, omit=("MCP-Protocol-Version",)
        )

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "UnsupportedProtocolVersionError")
        self.assertEqual(body["error"]["code"], -32022)

    def test_mcp_method_header_that_does_not_match_is_a_header_mismatch(self) -> None:
        response = self.rpc("tools/list", headers={"Mcp-Method": "resources/list"})

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "HeaderMismatchError")
        self.assertEqual(body["error"]["code"], -32020)

    def test_missing_mcp_name_on_tools_call_is_a_header_mismatch(self) -> None:
        response = self.rpc(
            "tools/call", {"name": "search_docs", "arguments": {"query": "token"}}, headers={"Mcp-Name": None}
        )

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "HeaderMismatchError")
        self.assertEqual(body["error"]["code"], -32020)

    def test_unknown_method_is_method_not_found(self) -> None:
        response = self.rpc("prompts/list")

        self.assertEqual(response.status_code, 404)
        body = response.json()
        validate_against_mcp_schema(body, "JSONRPCErrorResponse")
        validate_against_mcp_schema(body["error"], "MethodNotFoundError")
        self.assertEqual(body["error"]["code"], -32601)

    def test_unknown_tool_is_invalid_params(self) -> None:
        response = self.rpc("tools/call", {"name": "list_modules", "arguments": {}})

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "JSONRPCErrorResponse")
        self.assertEqual(body["error"]["code"], -32602)

    def test_get_is_method_not_allowed_without_authentication(self) -> None:
        response = self.client.get(DOCS_PATH)

        self.assertEqual(response.status_code, 405)

    def test_delete_is_method_not_allowed_without_authentication(self) -> None:
        response = self.client.delete(DOCS_PATH)

        self.assertEqual(response.status_code, 405)

    def test_cors_preflight_is_permissive(self) -> None:
        response = self.client.options(
            DOCS_PATH,
            headers={
                "Origin": "https://client.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, mcp-method, mcp-name, mcp-protocol-version",
            },
        )

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Access-Control-Allow-Origin"], "*")
        allowed = {name.strip() for name in response["Access-Control-Allow-Headers"].split(",")}
        self.assertTrue({"content-type", "mcp-method", "mcp-name", "mcp-protocol-version"} <= allowed)
        self.assertNotIn("Access-Control-Allow-Credentials", response)

    def test_only_www_authenticate_is_exposed_to_browsers(self) -> None:
        response = self.rpc("server/discover", headers={"Origin": "https://client.example"})

        self.assertEqual(response["Access-Control-Allow-Origin"], "*")
        self.assertEqual(response["Access-Control-Expose-Headers"], "WWW-Authenticate")

    def test_no_session_id_is_issued(self) -> None:
        response = self.rpc("server/discover")

        self.assertNotIn("Mcp-Session-Id", response)

    def test_results_carry_result_type_and_server_info(self) -> None:
        result = self.rpc("tools/list").json()["result"]

        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "service-docs")

    def test_no_tool_schema_uses_a_type_array(self) -> None:
        for tool in self.rpc("tools/list").json()["result"]["tools"]:
            self.assertEqual(type_arrays(tool["inputSchema"]) + type_arrays(tool["outputSchema"]), [], tool["name"])

    def test_tools_list_returns_the_two_read_only_tools_in_order(self) -> None:
        body = self.rpc("tools/list").json()

        validate_against_mcp_schema(body, "ListToolsResultResponse")
        tools = body["result"]["tools"]
        self.assertEqual([tool["name"] for tool in tools], ["search_docs", "get_doc"])
        for tool in tools:
            self.assertEqual(
                tool["annotations"],
                {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False, "openWorldHint": False},
            )
            self.assertFalse(tool["inputSchema"]["additionalProperties"])

    def test_meta_with_a_revision_not_served_is_refused(self) -> None:
        response = self.rpc("tools/list", meta={**CLIENT_META, "io.modelcontextprotocol/protocolVersion": "2025-06-18"})

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "UnsupportedProtocolVersionError")
        self.assertEqual(body["error"]["code"], -32022)
