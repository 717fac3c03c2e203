"""What each popular host sends, replayed: a host that cannot speak 2026-07-28 is sent to its recipe.

The fixtures (tests/hosts/captured.py) were captured on 2026-11-24 against a
live server. Each registration is accepted, and Claude Code's metadata document
with it. Each legacy first request gets -32022 with the contract's status and
`data.supported`, and a message that names this server's revision, the
client's, and the section of docs/connecting.md for that host. Each
2026-07-28 first request succeeds.
"""

import json
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.test import TestCase

from oauth.models import Application
from operator_core.conf import operator_settings
from organizations.models import Role
from tests.factories import make_membership, token_for
from tests.hosts.captured import (
    CLAUDE_CODE_AUTHORIZATION,
    CLAUDE_CODE_CLIENT_ID,
    CLAUDE_CODE_FIRST_REQUESTS,
    CODEX_META,
    HOST_REGISTRATIONS,
    LEGACY_FIRST_REQUESTS,
    MCP_REMOTE_FIRST_REQUESTS,
)
from tests.mcp_requests import PROTOCOL_VERSION, envelope, post_mcp
from tests.oauth.support import AUTHORIZE, OAuthTestCase, pkce_pair

REGISTER = "/api/auth/oauth2/register"
EXPECTED_TOOLS = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"]


def legacy_initialize(version: str, client_name: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client_name, "version": "1"}},
    }


class HostRegistrationTests(TestCase):
    def test_each_hosts_registration_is_accepted(self) -> None:
        for host, body in HOST_REGISTRATIONS.items():
            with self.subTest(host=host):
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
                    f"See {self.connecting}#{section} to connect it.",
                )

    def test_the_message_is_one_short_line_without_jargon(self) -> None:
        response = post_mcp(self.client, legacy_initialize("2025-06-18", "codex-mcp-client"), token=self.token)
        message = response.json()["error"]["message"]

        self.assertNotIn("\n", message)
        self.assertNotIn("_meta", message)
        self.assertLess(len(message), 200)

    def test_text_follows_the_link_so_an_appended_suffix_cannot_break_it(self) -> None:
        response = post_mcp(self.client, legacy_initialize("2025-06-18", "codex-mcp-client"), token=self.token)
        error = response.json()["error"]
        # What Codex shows: the message with `data` appended.
        shown = error["message"] + json.dumps(error["data"])

        link = f"{self.connecting}#codex"
        self.assertIn(f" {link} ", shown)
        self.assertFalse(error["message"].endswith(link))

    def test_a_request_without_a_revision_says_none_was_sent(self) -> None:
        response = post_mcp(self.client, envelope("tools/list", meta={}), token=self.token)

        self.assertIn("your client sent no MCP revision", response.json()["error"]["message"])

    def test_every_linked_section_exists_on_the_connecting_page(self) -> None:
        text = self.client.get("/docs/connecting").content.decode()
        for _, _, section in LEGACY_FIRST_REQUESTS.values():
            with self.subTest(section=section):
                self.assertTrue(f'id="{section}"' in text, f"docs/connecting.md has no section #{section}")

    def test_the_2026_envelope_of_codex_with_its_feature_succeeds(self) -> None:
        response = post_mcp(self.client, envelope("server/discover", meta=CODEX_META), token=self.token)

        self.assertEqual(response.status_code, 200)

    def test_the_first_requests_of_mcp_remote_with_protocol_auto_succeed(self) -> None:
        for message in MCP_REMOTE_FIRST_REQUESTS:
            with self.subTest(id=message["id"]):
                response = post_mcp(self.client, message, token=self.token)

                self.assertEqual(response.status_code, 200, response.content)
                self.assertEqual(response.json()["id"], message["id"])


class ClaudeCodeReplayTests(OAuthTestCase):
    """Claude Code 2.1.331 signs in with its metadata document, then discovers and lists the tools."""

    def setUp(self) -> None:
        super().setUp()
        self.membership = make_membership(role=Role.MEMBER)
        self.sign_in(self.membership.user)
        fetcher = {**settings.OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "tests.hosts.captured.CapturedDocumentFetcher"}
        self.enterContext(self.settings(OAUTH2_PROVIDER=fetcher))

    def test_claude_code_signs_in_and_lists_the_tools(self) -> None:
        verifier, challenge = pkce_pair()
        resource = operator_settings().operator_endpoint_url
        params = {**CLAUDE_CODE_AUTHORIZATION, "code_challenge": challenge, "code_challenge_method": "S256"}
        params.update(state="claude-code", resource=resource)

        page = self.browser.get(AUTHORIZE, params)
        self.assertEqual(page.status_code, 200, page.content[:500])
        self.assertContains(page, "Claude Code")
        form = {key: value for key, value in page.context["form"].initial.items() if value is not None}
        answer = self.browser.post(
            AUTHORIZE, {**form, "organization": str(self.membership.organization_id), "allow": "1"}
        )
        self.assertEqual(answer.status_code, 302, answer.content[:500])
        redirect = urlsplit(answer["Location"])
        self.assertEqual(f"{redirect.scheme}://{redirect.netloc}{redirect.path}", params["redirect_uri"])
        code = parse_qs(redirect.query)["code"][0]
        tokens = self.api.post(
            "/api/auth/oauth2/token",
            {
                "grant_type": "authorization_code",
                "code": code,
                "code_verifier": verifier,
                "redirect_uri": params["redirect_uri"],
                "resource": resource,
                "client_id": CLAUDE_CODE_CLIENT_ID,
            },
        )
        self.assertEqual(tokens.status_code, 200, tokens.content)
        self.assertEqual(tokens.json()["scope"].split(), CLAUDE_CODE_AUTHORIZATION["scope"].split())
        application = Application.objects.get(client_id=CLAUDE_CODE_CLIENT_ID)
        self.assertEqual(application.registration_source, Application.RegistrationSource.CIMD)

        discover, tools = (
            post_mcp(self.client, message, token=tokens.json()["access_token"])
            for message in CLAUDE_CODE_FIRST_REQUESTS
        )
        self.assertEqual(discover.status_code, 200, discover.content)
        self.assertEqual(discover.json()["result"]["serverInfo"]["name"], "service-operator")
        self.assertEqual(tools.status_code, 200, tools.content)
        self.assertEqual([tool["name"] for tool in tools.json()["result"]["tools"]], EXPECTED_TOOLS)
