"""`io.modelcontextprotocol/clientCapabilities` is required in every request's `_meta` (docs/transport.md).

Checked right after the protocol revision: missing, or anything but an object,
is 400 with -32602 (invalid params); `{}` is enough.
"""

from django.test import SimpleTestCase, override_settings

from operator_core.mcp.envelope import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from tests.mcp_requests import CLIENT_META, PROTOCOL_VERSION, envelope, post_mcp
from tests.support import validate_against_mcp_schema
from tests.transport.urls import PUBLIC_PATH


@override_settings(ROOT_URLCONF="tests.transport.urls")
class ClientCapabilitiesTests(SimpleTestCase):
    def post(self, message, **kwargs):
        return post_mcp(self.client, message, path=PUBLIC_PATH, **kwargs)

    def assert_error(self, response, *, status: int, code: int, definition: str = "JSONRPCErrorResponse") -> dict:
        self.assertEqual(response.status_code, status, response.content[:300])
        payload = response.json()
        validate_against_mcp_schema(payload, definition)
        self.assertEqual(payload["error"]["code"], code)
        return payload

    def assert_invalid_params(self, meta: dict) -> None:
        response = self.post(envelope("tools/list", meta=meta))

        payload = self.assert_error(response, status=400, code=-32602, definition="JSONRPCErrorResponse")
        validate_against_mcp_schema(payload["error"], "InvalidParamsError")
        self.assertEqual(payload["id"], 1)

    def test_missing_client_capabilities_are_invalid_params(self) -> None:
        meta = {key: value for key, value in CLIENT_META.items() if key != META_CLIENT_CAPABILITIES}

        self.assert_invalid_params(meta)

    def test_client_capabilities_that_are_not_an_object_are_invalid_params(self) -> None:
        for capabilities in ("tools", None, [], ["sampling"], 0, True):
            with self.subTest(capabilities=capabilities):
                self.assert_invalid_params({**CLIENT_META, META_CLIENT_CAPABILITIES: capabilities})

    def test_empty_client_capabilities_are_enough(self) -> None:
        response = self.post(envelope("tools/list", meta={**CLIENT_META, META_CLIENT_CAPABILITIES: {}}))

        self.assertEqual(response.status_code, 200)

    def test_unsupported_revision_wins_over_missing_client_capabilities(self) -> None:
        meta = {META_PROTOCOL_VERSION: "2025-06-18"}

        response = self.post(envelope("tools/list", meta=meta), omit=("MCP-Protocol-Version",))

        self.assert_error(response, status=400, code=-32022, definition="UnsupportedProtocolVersionError")

    def test_missing_client_capabilities_win_over_a_missing_method_header(self) -> None:
        meta = {META_PROTOCOL_VERSION: PROTOCOL_VERSION}

        response = self.post(envelope("tools/list", meta=meta), omit=("Mcp-Method",))

        self.assert_error(response, status=400, code=-32602)
