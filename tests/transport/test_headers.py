"""The shared MCP transport's headers and its authentication hook, over the fake tool set.

Every JSON-RPC response is validated against the official 2026-07-28 schema.
"""

from tests.mcp_requests import envelope
from tests.transport.support import TransportTestCase, b64
from tests.transport.urls import FAKE_PRINCIPAL, FAKE_TOKEN, PRIVATE_PATH, RESOURCE_URI


class HeaderTests(TransportTestCase):
    def assert_mismatch(self, response) -> None:
        self.assert_error(response, status=400, code=-32020, definition="HeaderMismatchError")

    def test_missing_mcp_method_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/list"), omit=("Mcp-Method",))

        self.assert_mismatch(response)

    def test_mismatched_mcp_method_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/list"), headers={"Mcp-Method": "resources/list"})

        self.assert_mismatch(response)

    def test_missing_mcp_name_on_tools_call_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo"}), omit=("Mcp-Name",))

        self.assert_mismatch(response)

    def test_mismatched_mcp_name_on_tools_call_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo"}), headers={"Mcp-Name": "explode"})

        self.assert_mismatch(response)

    def test_missing_mcp_name_on_resources_read_is_header_mismatch(self) -> None:
        response = self.post(envelope("resources/read", {"uri": RESOURCE_URI}), omit=("Mcp-Name",))

        self.assert_mismatch(response)

    def test_mismatched_mcp_name_on_resources_read_is_header_mismatch(self) -> None:
        response = self.post(envelope("resources/read", {"uri": RESOURCE_URI}), headers={"Mcp-Name": "mcp://x"})

        self.assert_mismatch(response)

    def test_mcp_name_is_not_required_for_methods_without_an_entity(self) -> None:
        response = self.post(envelope("tools/list"), omit=("Mcp-Name",))

        self.assertEqual(response.status_code, 200)

    def test_mismatched_protocol_version_header_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/list"), headers={"MCP-Protocol-Version": "2025-11-25"})

        self.assert_mismatch(response)

    def test_absent_protocol_version_header_is_accepted(self) -> None:
        response = self.post(envelope("tools/list"), omit=("MCP-Protocol-Version",))

        self.assertEqual(response.status_code, 200)

    def test_base64_encoded_name_is_decoded_before_comparing(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo"}), headers={"Mcp-Name": b64("echo")})

        self.assertEqual(response.status_code, 200)

    def test_base64_encoded_non_ascii_uri_is_decoded(self) -> None:
        response = self.post(
            envelope("resources/read", {"uri": "mcp://café.json"}), headers={"Mcp-Name": b64("mcp://café.json")}
        )

        # the header matched; the fake has no such resource
        self.assert_error(response, status=400, code=-32602)

    def test_base64_encoded_method_is_decoded(self) -> None:
        response = self.post(envelope("tools/list"), headers={"Mcp-Method": b64("tools/list")})

        self.assertEqual(response.status_code, 200)

    def test_malformed_base64_is_header_mismatch(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo"}), headers={"Mcp-Name": "=?base64?!!!?="})

        self.assert_mismatch(response)


class AuthenticationHookTests(TransportTestCase):
    def test_refusal_is_answered_untouched(self) -> None:
        response = self.post(envelope("tools/list"), path=PRIVATE_PATH)

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.content, b"refused")
        self.assertEqual(response["WWW-Authenticate"], "Bearer")

    def test_authentication_runs_before_the_method_check(self) -> None:
        response = self.client.get(PRIVATE_PATH)

        self.assertEqual(response.status_code, 401)

    def test_authentication_runs_before_the_body_check(self) -> None:
        response = self.post(envelope("tools/list"), path=PRIVATE_PATH, body="{not json")

        self.assertEqual(response.status_code, 401)

    def test_principal_reaches_the_tool_set(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo"}), path=PRIVATE_PATH, token=FAKE_TOKEN)

        self.assertEqual(response.json()["result"]["structuredContent"]["principal"], FAKE_PRINCIPAL)

    def test_authenticated_answers_are_private_to_the_token(self) -> None:
        response = self.post(envelope("server/discover"), path=PRIVATE_PATH, token=FAKE_TOKEN)

        self.assertEqual(response.json()["result"]["cacheScope"], "private")
