"""`tools/list` of the operator endpoint: the five tools of docs/tools.md, in order."""

from organizations.models import Role
from tests.factories import make_membership, token_for
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_requests import envelope, post_mcp
from tests.support import type_arrays, validate_against_mcp_schema

TOOL_NAMES = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"]
READ_ONLY = {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False, "openWorldHint": False}


class ToolListTests(OperatorEndpointTestCase):
    def list_tools(self) -> list[dict]:
        token = token_for(make_membership(role=Role.MEMBER))
        response = post_mcp(self.client, envelope("tools/list"), token=token)
        self.assertEqual(response.status_code, 200, response.content)
        validate_against_mcp_schema(response.json(), "ListToolsResultResponse")
        return response.json()["result"]["tools"]

    def test_lists_the_five_tools_in_order(self) -> None:
        self.assertEqual([entry["name"] for entry in self.list_tools()], TOOL_NAMES)

    def test_every_tool_is_annotated_read_only(self) -> None:
        for entry in self.list_tools():
            self.assertEqual(entry["annotations"], READ_ONLY, entry["name"])

    def test_every_input_schema_is_closed_and_accepts_both_selectors(self) -> None:
        for entry in self.list_tools():
            schema = entry["inputSchema"]
            self.assertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
            self.assertIs(schema["additionalProperties"], False, entry["name"])
            self.assertEqual(schema["properties"]["organizationSlug"]["type"], "string")
            self.assertEqual(schema["properties"]["organizationId"]["type"], "string")

    def test_every_output_schema_is_an_object_schema(self) -> None:
        for entry in self.list_tools():
            self.assertEqual(entry["outputSchema"]["type"], "object", entry["name"])

    def test_no_schema_uses_a_type_array(self) -> None:
        for entry in self.list_tools():
            self.assertEqual(type_arrays(entry["inputSchema"]), [], entry["name"])
            self.assertEqual(type_arrays(entry["outputSchema"]), [], entry["name"])

    def test_the_list_is_the_same_for_every_token(self) -> None:
        self.assertEqual(self.list_tools(), self.list_tools())
