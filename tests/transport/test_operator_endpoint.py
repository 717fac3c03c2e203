"""The shared transport as mounted on /api/mcp/operator, with the real tools and authentication."""

import json

from django.conf import settings
from django.test import TestCase

from mcp_operator.tools import TOOLS
from organizations.models import Role
from tests.factories import make_membership, make_module, token_for
from tests.mcp_requests import PROTOCOL_VERSION, envelope, legacy_initialize, post_mcp
from tests.support import validate_against_mcp_schema

SERVER_INFO = {"name": "service-operator", "title": "Service Operator", "version": "1.0.0"}


class OperatorEndpointTransportTests(TestCase):
    def setUp(self) -> None:
        self.membership = make_membership(role=Role.MEMBER)
        self.token = token_for(self.membership)

    def post(self, message, **kwargs):
        return post_mcp(self.client, message, token=self.token, **kwargs)

    def test_discover_names_the_service_operator(self) -> None:
        response = self.post(envelope("server/discover"))

        payload = response.json()
        validate_against_mcp_schema(payload, "DiscoverResultResponse")
        result = payload["result"]
        self.assertEqual(result["serverInfo"], SERVER_INFO)
        self.assertEqual(result["supportedVersions"], [PROTOCOL_VERSION])
        self.assertEqual(result["capabilities"], {"tools": {}, "resources": {}})
        self.assertTrue(result["instructions"])
        self.assertEqual(result["_meta"]["io.modelcontextprotocol/serverInfo"], SERVER_INFO)

    def test_tools_list_returns_the_five_tools_in_order(self) -> None:
        response = self.post(envelope("tools/list"))

        payload = response.json()
        validate_against_mcp_schema(payload, "ListToolsResultResponse")
        self.assertEqual(
            [tool["name"] for tool in payload["result"]["tools"]],
            ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"],
        )
        self.assertEqual((payload["result"]["ttlMs"], payload["result"]["cacheScope"]), (0, "private"))

    def test_tools_list_is_the_same_for_every_accepted_token(self) -> None:
        other = token_for(make_membership(role=Role.ADMIN))

        first = self.post(envelope("tools/list")).json()["result"]["tools"]
        second = post_mcp(self.client, envelope("tools/list"), token=other).json()["result"]["tools"]

        self.assertEqual(first, second)

    def test_tools_call_runs_as_the_token_in_its_organization(self) -> None:
        module = make_module(organization=self.membership.organization)

        response = self.post(envelope("tools/call", {"name": "list_modules", "arguments": {}}))

        payload = response.json()
        validate_against_mcp_schema(payload, "CallToolResultResponse")
        result = payload["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["structuredContent"]["organization"]["id"], str(self.membership.organization_id))
        self.assertEqual([m["id"] for m in result["structuredContent"]["modules"]], [str(module.id)])

    def test_unknown_tool_is_invalid_params(self) -> None:
        response = self.post(envelope("tools/call", {"name": "create_module", "arguments": {}}))

        self.assertEqual(response.status_code, 400)
        payload = response.json()
        validate_against_mcp_schema(payload, "JSONRPCErrorResponse")
        self.assertEqual(payload["error"]["code"], -32602)

    def test_resources_list_holds_exactly_the_server_card(self) -> None:
        response = self.post(envelope("resources/list"))

        payload = response.json()
        validate_against_mcp_schema(payload, "ListResourcesResultResponse")
        self.assertEqual([r["uri"] for r in payload["result"]["resources"]], ["mcp://server-card.json"])

    def test_resource_templates_list_is_empty_and_private(self) -> None:
        response = self.post(envelope("resources/templates/list"))

        self.assertEqual(response.status_code, 200)
        payload = response.json()
        validate_against_mcp_schema(payload, "ListResourceTemplatesResultResponse")
        self.assertEqual(payload["result"]["resourceTemplates"], [])
        self.assertEqual((payload["result"]["ttlMs"], payload["result"]["cacheScope"]), (0, "private"))

    def test_unknown_resource_is_invalid_params(self) -> None:
        response = self.post(envelope("resources/read", {"uri": "mcp://other.json"}))

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], -32602)

    def test_prompts_are_not_served(self) -> None:
        response = self.post(envelope("prompts/list"))

        self.assertEqual(response.status_code, 404)
        self.assertEqual(response.json()["error"]["code"], -32601)

    def test_initialize_is_refused_with_supported_versions(self) -> None:
        response = self.post(legacy_initialize(), omit=("MCP-Protocol-Version",))

        self.assertEqual(response.status_code, 400)
        payload = response.json()
        validate_against_mcp_schema(payload, "UnsupportedProtocolVersionError")
        self.assertEqual(payload["error"]["data"]["supported"], [PROTOCOL_VERSION])

    def test_missing_method_header_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/list"), omit=("Mcp-Method",))

        self.assertEqual(response.status_code, 400)
        validate_against_mcp_schema(response.json(), "HeaderMismatchError")

    def test_notification_is_accepted(self) -> None:
        response = self.post(envelope("notifications/cancelled", {"requestId": 1}, request_id=None))

        self.assertEqual(response.status_code, 202)

    def test_the_whole_exchange_never_uses_a_session(self) -> None:
        response = self.post(envelope("tools/call", {"name": "list_modules", "arguments": {}}))

        self.assertEqual(response.cookies, {})
        self.assertNotIn("Mcp-Session-Id", response)
        self.assertEqual(response["Cache-Control"], "no-store")

    def test_tool_list_names_match_the_registry(self) -> None:
        response = self.post(envelope("tools/list"))

        listed = response.json()["result"]["tools"]
        self.assertEqual([tool["name"] for tool in listed], [tool.name for tool in TOOLS])
        self.assertTrue(all(json.dumps(tool["inputSchema"]) for tool in listed))


class EncodedOnceTests(TestCase):
    """tools/list and server/discover are encoded once; the bytes stay those of encoding the whole answer."""

    def setUp(self) -> None:
        self.token = token_for(make_membership(role=Role.MEMBER))

    def test_repeated_answers_are_the_full_encoding_with_each_request_id(self) -> None:
        for method in ("tools/list", "server/discover"):
            for request_id in (1, "second-call", 3):
                response = post_mcp(self.client, envelope(method, request_id=request_id), token=self.token)
                expected = {"jsonrpc": "2.0", "id": request_id, "result": response.json()["result"]}
                self.assertEqual(response.content, json.dumps(expected, ensure_ascii=False).encode())

    def test_a_settings_change_is_seen_by_the_next_discover(self) -> None:
        post_mcp(self.client, envelope("server/discover"), token=self.token)
        with self.settings(OPERATOR={**settings.OPERATOR, "server_version": "9.9.9"}):
            response = post_mcp(self.client, envelope("server/discover"), token=token_for(make_membership()))
        self.assertEqual(response.json()["result"]["serverInfo"]["version"], "9.9.9")
