"""Every docs page is an MCP resource `docs://<path>`."""

from django.conf import settings

from mcp_docs.selectors import load_library
from tests.mcp_docs.base import DocsEndpointTestCase
from tests.support import validate_against_mcp_schema


class DocsResourcesTests(DocsEndpointTestCase):
    def test_every_page_is_listed_as_markdown_index_first(self) -> None:
        body = self.rpc("resources/list").json()

        validate_against_mcp_schema(body, "ListResourcesResultResponse")
        resources = body["result"]["resources"]
        pages = load_library(settings.OPERATOR["docs_dir"]).pages
        self.assertEqual([item["uri"] for item in resources], [f"docs://{page.path}" for page in pages])
        self.assertEqual(resources[0]["uri"], "docs://index.md")
        self.assertEqual({item["mimeType"] for item in resources}, {"text/markdown"})

    def test_reading_a_page_returns_its_markdown(self) -> None:
        body = self.rpc("resources/read", {"uri": "docs://versioning.md"}).json()

        validate_against_mcp_schema(body, "ReadResourceResultResponse")
        contents = body["result"]["contents"]
        expected = load_library(settings.OPERATOR["docs_dir"]).page("versioning.md").markdown
        self.assertEqual(contents, [{"uri": "docs://versioning.md", "mimeType": "text/markdown", "text": expected}])

    def test_resource_templates_list_is_empty_and_public(self) -> None:
        response = self.rpc("resources/templates/list")

        self.assertEqual(response.status_code, 200)
        body = response.json()
        validate_against_mcp_schema(body, "ListResourceTemplatesResultResponse")
        self.assertEqual(body["result"]["resourceTemplates"], [])
        self.assertEqual((body["result"]["ttlMs"], body["result"]["cacheScope"]), (0, "public"))

    def test_unknown_resource_is_invalid_params(self) -> None:
        response = self.rpc("resources/read", {"uri": "docs://nope.md"})

        self.assertEqual(response.status_code, 400)
        body = response.json()
        validate_against_mcp_schema(body, "JSONRPCErrorResponse")
        self.assertEqual(body["error"]["code"], -32602)

    def test_operator_server_card_is_not_a_docs_resource(self) -> None:
        response = self.rpc("resources/read", {"uri": "mcp://server-card.json"})

        self.assertEqual(response.json()["error"]["code"], -32602)
