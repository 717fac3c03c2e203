"""The whole headless path: email code by real SMTP, claim, then the token on the operator endpoint."""

from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase
from tests.factories import make_membership
from tests.mcp_requests import envelope, post_mcp


class HeadlessTokenOnOperatorEndpointTests(HeadlessTestCase):
    def call_operator(self, access_token: str, method: str, params: dict):
        return post_mcp(self.client, envelope(method, params), token=access_token)

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

        response = self.call_operator(access_token, "tools/call", {"name": "list_modules", "arguments": {}})

        self.assertEqual(response.status_code, 200)
        result = response.json()["result"]
        self.assertNotIn("isError", result)
        self.assertEqual(result["structuredContent"]["organization"]["id"], str(organization.id))
