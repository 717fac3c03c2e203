"""What each popular host sends first, replayed: a host that cannot speak 2026-07-28 is sent to its recipe.

The registration bodies and first requests of Codex CLI 0.169.0, OpenCode
1.18.33 and Gemini CLI 0.61.0 were captured on 2026-11-24 against a live
server. Each registration is accepted; each legacy first request gets -32022
with the contract's status and `data.supported`, and a message that names
this server's revision, the client's, and the section of docs/connecting.md
for that host.
"""

import json

from django.test import TestCase

from operator_core.conf import operator_settings
from tests.factories import make_membership, token_for
from tests.mcp_requests import PROTOCOL_VERSION, envelope, post_mcp

REGISTER = "/api/auth/oauth2/register"

CODEX_REGISTRATION = {
    "client_name": "Codex",
    "redirect_uris": ["http://127.0.0.1:42703/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "none",
    "response_types": ["code"],
    "scope": "mcp:operator.read offline_access",
    "application_type": "native",
}
OPENCODE_REGISTRATION = {
    "redirect_uris": ["http://127.0.0.1:19876/mcp/oauth/callback"],
    "client_name": "OpenCode",
    "client_uri": "https://opencode.ai",
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "scope": "mcp:operator.read offline_access",
}
GEMINI_REGISTRATION = {
    "client_name": "Gemini CLI MCP Client",
    "redirect_uris": ["http://localhost:33181/oauth/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "scope": "email mcp:operator.read mcp:operator.write offline_access openid profile",
}

# host: (its first request's revision, clientInfo.name, the section of docs/connecting.md)
LEGACY_FIRST_REQUESTS = {
    "codex": ("2025-06-18", "codex-mcp-client", "codex"),
    "opencode": ("2025-11-25", "opencode", "opencode"),
    "gemini-cli": ("2025-06-18", "gemini-cli-mcp-client", "gemini-cli"),
    "mcp-remote without --protocol auto": ("2025-06-18", "mcp-remote", "mcp-remote"),
    "an unknown client": ("2025-03-26", "some-new-host", "protocol-revision"),
}


def legacy_initialize(version: str, client_name: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client_name, "version": "1"}},
    }


class HostRegistrationTests(TestCase):
    def test_each_hosts_registration_is_accepted(self) -> None:
        for body in (CODEX_REGISTRATION, OPENCODE_REGISTRATION, GEMINI_REGISTRATION):
            with self.subTest(client=body["client_name"]):
                response = self.client.post(REGISTER, data=json.dumps(body), content_type="application/json")
                self.assertEqual(response.status_code, 201, response.content)


class LegacyFirstRequestTests(TestCase):
    def setUp(self) -> None:
        self.token = token_for(make_membership())
        self.connecting = f"{operator_settings().base_url}/docs/connecting"

    def test_each_legacy_host_is_sent_to_its_own_recipe(self) -> None:
        for host, (version, client_name, section) in LEGACY_FIRST_REQUESTS.items():
            with self.subTest(host=host):
                message = legacy_initialize(version, client_name)
                response = post_mcp(self.client, message, token=self.token)

                self.assertEqual(response.status_code, 400)
                error = response.json()["error"]
                self.assertEqual(error["code"], -32022)
                self.assertEqual(error["data"]["supported"], [PROTOCOL_VERSION])
                self.assertEqual(
                    error["message"],
                    f"This server speaks MCP {PROTOCOL_VERSION} only; your client sent MCP {version}. "
                    f"To connect: {self.connecting}#{section}",
                )

    def test_the_message_is_one_short_line_without_jargon(self) -> None:
        response = post_mcp(self.client, legacy_initialize("2025-06-18", "codex-mcp-client"), token=self.token)
        message = response.json()["error"]["message"]

        self.assertNotIn("\n", message)
        self.assertNotIn("_meta", message)
        self.assertLess(len(message), 200)

    def test_a_request_without_a_revision_says_none_was_sent(self) -> None:
        response = post_mcp(self.client, envelope("tools/list", meta={}), token=self.token)

        self.assertIn("your client sent no MCP revision", response.json()["error"]["message"])

    def test_every_linked_section_exists_on_the_connecting_page(self) -> None:
        text = self.client.get("/docs/connecting").content.decode()
        for _, _, section in LEGACY_FIRST_REQUESTS.values():
            with self.subTest(section=section):
                self.assertTrue(f'id="{section}"' in text, f"docs/connecting.md has no section #{section}")

    def test_the_2026_envelope_of_codex_with_its_feature_succeeds(self) -> None:
        meta = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        response = post_mcp(self.client, envelope("server/discover", meta=meta), token=self.token)

        self.assertEqual(response.status_code, 200)
