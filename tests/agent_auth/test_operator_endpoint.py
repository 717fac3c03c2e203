"""The whole headless path: email code by real SMTP, claim, then the token on the operator endpoint."""

from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase
from tests.factories import make_membership

OPERATOR_URL = "/api/mcp/operator"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class HeadlessTokenOnOperatorEndpointTests(HeadlessTestCase):
    def call_operator(self, access_token: str, method: str, params: dict, **headers: str):
        return self.client.post(
            OPERATOR_URL,
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}},
            content_type="application/json",
            headers={
                "Accept": "application/json, text/event-stream",
                "Mcp-Method": method,
                "Authorization": f"Bearer {access_token}",
                **headers,
            },
        )

    def token_for_second_organization(self):
        first = make_membership(role=Role.ADMIN)
        second = make_membership(role=Role.MEMBER, user=first.user)
        claim_token, code = self.start_and_read_code(first.user.email)
        self.assertEqual(self.complete(claim_token, code).status_code, 409)
        response = self.complete(claim_token, code, organization_id=str(second.organization.id))
        self.assertEqual(response.status_code, 200)
        return response.json()["access_token"], second.organization

    def test_headless_token_lists_the_tools(self) -> None:
        access_token, _ = self.token_for_second_organization()

        response = self.call_operator(access_token, "tools/list", {})

        self.assertEqual(response.status_code, 200)
        tools = [tool["name"] for tool in response.json()["result"]["tools"]]
        self.assertEqual(tools, ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"])

    def test_headless_token_works_in_the_chosen_organization(self) -> None:
        access_token, organization = self.token_for_second_organization()

        response = self.call_operator(
            access_token, "tools/call", {"name": "list_modules", "arguments": {}}, **{"Mcp-Name": "list_modules"}
        )

        self.assertEqual(response.status_code, 200)
        result = response.json()["result"]
        self.assertNotIn("isError", result)
        self.assertEqual(result["structuredContent"]["organization"]["id"], str(organization.id))
