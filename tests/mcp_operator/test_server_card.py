"""The server card at /.well-known/mcp/server-card.json and as mcp://server-card.json; /.well-known/mcp."""

from django.test import TestCase

from mcp_operator.tools import TOOLS
from tests.factories import make_membership, token_for
from tests.mcp_requests import PROTOCOL_VERSION, envelope, post_mcp
from tests.support import validate_against_mcp_schema, validate_server_card

CARD_PATH = "/.well-known/mcp/server-card.json"


class ServerCardTests(TestCase):
    def test_card_is_public_and_valid(self) -> None:
        response = self.client.get(CARD_PATH)

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Content-Type"], "application/json")
        validate_server_card(response.json())

    def test_card_names_the_operator_remote(self) -> None:
        card = self.client.get(CARD_PATH).json()

        self.assertEqual(card["remotes"][0]["url"], "http://testserver/api/mcp/operator")
        self.assertEqual(card["remotes"][0]["type"], "streamable-http")
        self.assertEqual(card["remotes"][0]["supportedProtocolVersions"], [PROTOCOL_VERSION])

    def test_card_describes_authentication(self) -> None:
        card = self.client.get(CARD_PATH).json()

        self.assertEqual(card["authentication"]["type"], "oauth2.1")
        self.assertEqual(
            card["authentication"]["resourceMetadataUrl"],
            "http://testserver/.well-known/oauth-protected-resource/api/mcp/operator",
        )
        self.assertIn("mcp:operator.read", card["authentication"]["scopes"])

    def test_card_lists_the_five_tools_with_descriptions(self) -> None:
        card = self.client.get(CARD_PATH).json()

        self.assertEqual([tool["name"] for tool in card["tools"]], [tool.name for tool in TOOLS])
        self.assertEqual(len(card["tools"]), 5)
        self.assertTrue(all(tool["description"] for tool in card["tools"]))

    def test_card_carries_instructions(self) -> None:
        card = self.client.get(CARD_PATH).json()

        self.assertIn("list_modules", card["instructions"])

    def test_resource_is_the_same_json_as_the_public_card(self) -> None:
        token = token_for(make_membership())
        public = self.client.get(CARD_PATH).content.decode()

        response = post_mcp(self.client, envelope("resources/read", {"uri": "mcp://server-card.json"}), token=token)

        payload = response.json()
        validate_against_mcp_schema(payload, "ReadResourceResultResponse")
        (contents,) = payload["result"]["contents"]
        self.assertEqual(contents["uri"], "mcp://server-card.json")
        self.assertEqual(contents["mimeType"], "application/json")
        self.assertEqual(contents["text"], public)

    def test_card_is_readable_cross_origin(self) -> None:
        response = self.client.get(CARD_PATH, headers={"Origin": "https://app.example"})

        self.assertEqual(response["Access-Control-Allow-Origin"], "*")

    def test_card_refuses_post(self) -> None:
        response = self.client.post(CARD_PATH)

        self.assertEqual(response.status_code, 405)


class WellKnownMcpTests(TestCase):
    def test_lists_served_protocol_versions(self) -> None:
        response = self.client.get("/.well-known/mcp")

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json()["mcp"]["protocolVersions"], [PROTOCOL_VERSION])

    def test_points_at_the_card_and_the_endpoint(self) -> None:
        document = self.client.get("/.well-known/mcp").json()["mcp"]

        self.assertEqual(document["serverCard"], "http://testserver/.well-known/mcp/server-card.json")
        self.assertEqual(document["endpoints"][0]["url"], "http://testserver/api/mcp/operator")
