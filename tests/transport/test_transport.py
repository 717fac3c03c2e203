"""The shared MCP transport over a fake tool set: envelope, order of checks, errors, results.

Every JSON-RPC response is validated against the official 2026-07-28 schema.
"""

import json

from django.conf import settings
from django.test import override_settings

from operator_core.mcp.envelope import META_SERVER_INFO
from tests.mcp_requests import CLIENT_META, PROTOCOL_VERSION, envelope, legacy_initialize
from tests.support import validate_against_mcp_schema
from tests.transport.support import TransportTestCase
from tests.transport.urls import PRIVATE_PATH, PUBLIC_PATH, RESOURCE_URI

FAKE_SERVER_INFO = {"name": "fake-server", "title": "Fake Server", "version": "9.9.9"}


class ResultTests(TransportTestCase):
    def test_discover_names_versions_capabilities_and_server(self) -> None:
        response = self.post(envelope("server/discover"))

        self.assertEqual(response.status_code, 200)
        payload = response.json()
        validate_against_mcp_schema(payload, "DiscoverResultResponse")
        result = payload["result"]
        self.assertEqual(result["supportedVersions"], [PROTOCOL_VERSION])
        self.assertEqual(result["capabilities"], {"tools": {}, "resources": {}})
        self.assertEqual(result["serverInfo"], FAKE_SERVER_INFO)
        self.assertEqual(result["instructions"], "Use echo.")
        self.assertEqual((result["ttlMs"], result["cacheScope"]), (0, "public"))

    def test_every_result_is_complete_and_names_the_server(self) -> None:
        response = self.post(envelope("tools/list"))

        result = response.json()["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["_meta"][META_SERVER_INFO], FAKE_SERVER_INFO)

    def test_tools_list_is_cacheable_result(self) -> None:
        response = self.post(envelope("tools/list"))

        payload = response.json()
        validate_against_mcp_schema(payload, "ListToolsResultResponse")
        self.assertEqual([tool["name"] for tool in payload["result"]["tools"]], ["echo"])

    def test_tools_call_passes_name_arguments_and_principal(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo", "arguments": {"x": 1}}))

        payload = response.json()
        validate_against_mcp_schema(payload, "CallToolResultResponse")
        self.assertEqual(payload["result"]["structuredContent"], {"arguments": {"x": 1}, "principal": None})

    def test_tools_call_without_arguments_passes_an_empty_object(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo"}))

        self.assertEqual(response.json()["result"]["structuredContent"]["arguments"], {})

    def test_resources_list(self) -> None:
        response = self.post(envelope("resources/list"))

        payload = response.json()
        validate_against_mcp_schema(payload, "ListResourcesResultResponse")
        self.assertEqual(payload["result"]["resources"][0]["uri"], RESOURCE_URI)

    def test_resources_read(self) -> None:
        response = self.post(envelope("resources/read", {"uri": RESOURCE_URI}))

        payload = response.json()
        validate_against_mcp_schema(payload, "ReadResourceResultResponse")
        self.assertEqual(payload["result"]["contents"][0]["text"], "{}")

    def test_string_id_is_echoed(self) -> None:
        response = self.post(envelope("tools/list", request_id="abc"))

        self.assertEqual(response.json()["id"], "abc")

    def test_response_is_json(self) -> None:
        response = self.post(envelope("tools/list"))

        self.assertEqual(response["Content-Type"], "application/json")

    def test_session_id_is_never_issued(self) -> None:
        response = self.post(envelope("server/discover"))

        self.assertNotIn("Mcp-Session-Id", response)

    def test_session_id_and_last_event_id_sent_by_a_client_are_ignored(self) -> None:
        response = self.post(envelope("tools/list"), headers={"Mcp-Session-Id": "abc", "Last-Event-ID": "7"})

        self.assertEqual(response.status_code, 200)
        self.assertNotIn("Mcp-Session-Id", response)

    def test_notification_is_accepted_without_body(self) -> None:
        response = self.post(envelope("notifications/cancelled", {"requestId": 1}, request_id=None))

        self.assertEqual(response.status_code, 202)
        self.assertEqual(response.content, b"")


class DispatchErrorTests(TransportTestCase):
    def test_unknown_method_is_404_method_not_found(self) -> None:
        response = self.post(envelope("prompts/list"))

        payload = self.assert_error(response, status=404, code=-32601)
        validate_against_mcp_schema(payload["error"], "MethodNotFoundError")
        self.assertEqual(payload["id"], 1)

    def test_unknown_tool_is_invalid_params(self) -> None:
        response = self.post(envelope("tools/call", {"name": "nope", "arguments": {}}))

        payload = self.assert_error(response, status=400, code=-32602)
        validate_against_mcp_schema(payload["error"], "InvalidParamsError")

    def test_unknown_resource_is_invalid_params(self) -> None:
        response = self.post(envelope("resources/read", {"uri": "mcp://nope.json"}))

        payload = self.assert_error(response, status=400, code=-32602)
        self.assertEqual(payload["error"]["data"], {"uri": "mcp://nope.json"})

    def test_arguments_that_are_not_an_object_are_invalid_params(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo", "arguments": [1]}))

        self.assert_error(response, status=400, code=-32602)

    def test_operator_error_escaping_a_tool_set_is_a_jsonrpc_error_with_its_code(self) -> None:
        response = self.post(envelope("tools/call", {"name": "refuse"}))

        payload = self.assert_error(response, status=200, code=-32603)
        self.assertEqual(payload["error"]["data"], {"code": "forbidden", "message": "Not allowed here."})

    def test_unexpected_failure_is_internal_error_without_detail(self) -> None:
        with self.assertLogs("operator_core.mcp.transport", level="ERROR"):
            response = self.post(envelope("tools/call", {"name": "explode"}))

        payload = self.assert_error(response, status=200, code=-32603)
        validate_against_mcp_schema(payload["error"], "InternalError")
        self.assertEqual(payload["error"]["message"], "Internal error")
        self.assertNotIn(b"secret", response.content)


class HttpMethodTests(TransportTestCase):
    def test_get_is_405_with_allow(self) -> None:
        response = self.client.get(PUBLIC_PATH)

        self.assert_error(response, status=405, code=-32600)
        self.assertEqual(response["Allow"], "POST, OPTIONS")

    def test_delete_is_405_with_allow(self) -> None:
        response = self.client.delete(PUBLIC_PATH)

        self.assertEqual(response.status_code, 405)
        self.assertEqual(response["Allow"], "POST, OPTIONS")

    def test_put_is_405(self) -> None:
        response = self.client.put(PUBLIC_PATH, data="{}", content_type="application/json")

        self.assertEqual(response.status_code, 405)

    def test_plain_options_is_answered_without_authentication(self) -> None:
        response = self.client.options(PRIVATE_PATH)

        self.assertEqual(response.status_code, 204)
        self.assertEqual(response["Allow"], "POST, OPTIONS")


class CorsTests(TransportTestCase):
    def test_preflight_is_permissive_without_authentication(self) -> None:
        response = self.client.options(
            PRIVATE_PATH,
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-method, mcp-name",
            },
        )

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Access-Control-Allow-Origin"], "*")
        allowed = {header.strip() for header in response["Access-Control-Allow-Headers"].split(",")}
        self.assertLessEqual(
            {"authorization", "content-type", "mcp-method", "mcp-name", "mcp-protocol-version"}, allowed
        )
        self.assertIn("POST", response["Access-Control-Allow-Methods"])
        self.assertNotIn("Access-Control-Allow-Credentials", response)

    def test_only_www_authenticate_is_exposed(self) -> None:
        response = self.post(envelope("tools/list"), headers={"Origin": "https://app.example"})

        self.assertEqual(response["Access-Control-Allow-Origin"], "*")
        self.assertEqual(response["Access-Control-Expose-Headers"], "WWW-Authenticate")
        self.assertNotIn("Access-Control-Allow-Credentials", response)

    def test_refusals_carry_cors_headers_so_browsers_can_read_the_challenge(self) -> None:
        response = self.post(envelope("tools/list"), path=PRIVATE_PATH, headers={"Origin": "https://app.example"})

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response["Access-Control-Allow-Origin"], "*")
        self.assertEqual(response["Access-Control-Expose-Headers"], "WWW-Authenticate")


class BodyTests(TransportTestCase):
    def test_non_json_content_type_is_415(self) -> None:
        response = self.post(envelope("tools/list"), content_type="text/plain")

        self.assert_error(response, status=415, code=-32600)

    @override_settings(OPERATOR={**settings.OPERATOR, "max_request_bytes": 64})
    def test_body_over_the_limit_is_413(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo", "arguments": {"text": "x" * 100}}))

        self.assert_error(response, status=413, code=-32600)

    def test_invalid_json_is_parse_error(self) -> None:
        response = self.post(envelope("tools/list"), body="{not json")

        payload = self.assert_error(response, status=400, code=-32700)
        validate_against_mcp_schema(payload["error"], "ParseError")

    def test_batch_is_invalid_request(self) -> None:
        response = self.post(envelope("tools/list"), body=json.dumps([envelope("tools/list")]))

        payload = self.assert_error(response, status=400, code=-32600)
        validate_against_mcp_schema(payload["error"], "InvalidRequestError")

    def test_json_that_is_not_an_object_is_invalid_request(self) -> None:
        response = self.post(envelope("tools/list"), body='"tools/list"')

        self.assert_error(response, status=400, code=-32600)

    def test_missing_jsonrpc_version_is_invalid_request(self) -> None:
        message = envelope("tools/list")
        del message["jsonrpc"]

        response = self.post(message)

        self.assert_error(response, status=400, code=-32600)

    def test_null_id_is_invalid_request(self) -> None:
        message = {**envelope("tools/list"), "id": None}

        response = self.post(message)

        self.assert_error(response, status=400, code=-32600)

    def test_params_that_are_not_an_object_are_invalid_request(self) -> None:
        message = {**envelope("tools/list"), "params": [1]}

        response = self.post(message)

        self.assert_error(response, status=400, code=-32600)


class ProtocolRevisionTests(TransportTestCase):
    def assert_unsupported(self, response, *, requested: str) -> None:
        payload = self.assert_error(response, status=400, code=-32022, definition="UnsupportedProtocolVersionError")
        self.assertEqual(payload["error"]["data"], {"supported": [PROTOCOL_VERSION], "requested": requested})

    def test_missing_meta_is_unsupported_protocol_version(self) -> None:
        response = self.post(envelope("tools/list", meta=None))

        self.assert_unsupported(response, requested=PROTOCOL_VERSION)

    def test_missing_params_is_unsupported_protocol_version(self) -> None:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

        response = self.post(message, omit=("MCP-Protocol-Version",))

        self.assert_unsupported(response, requested="")

    def test_meta_without_version_is_unsupported_protocol_version(self) -> None:
        meta = {key: value for key, value in CLIENT_META.items() if "protocolVersion" not in key}

        response = self.post(envelope("tools/list", meta=meta), omit=("MCP-Protocol-Version",))

        self.assert_unsupported(response, requested="")

    def test_unserved_version_is_unsupported_protocol_version(self) -> None:
        meta = {**CLIENT_META, "io.modelcontextprotocol/protocolVersion": "2025-06-18"}

        response = self.post(envelope("tools/list", meta=meta), headers={"MCP-Protocol-Version": "2025-06-18"})

        self.assert_unsupported(response, requested="2025-06-18")

    def test_2025_initialize_is_unsupported_protocol_version(self) -> None:
        response = self.post(legacy_initialize(), omit=("MCP-Protocol-Version",))

        self.assert_unsupported(response, requested="2025-11-25")

    def test_initialize_with_a_modern_envelope_is_still_refused(self) -> None:
        response = self.post(envelope("initialize"))

        self.assert_unsupported(response, requested=PROTOCOL_VERSION)

    def test_missing_meta_wins_over_missing_method_header(self) -> None:
        response = self.post(envelope("tools/list", meta=None), omit=("Mcp-Method",))

        self.assert_error(response, status=400, code=-32022, definition="UnsupportedProtocolVersionError")
