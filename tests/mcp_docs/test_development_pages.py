"""docs/development/ is the maintainer's guide: the public docs endpoint neither lists nor serves it."""

import tempfile
from pathlib import Path

from django.conf import settings
from django.test import SimpleTestCase

from mcp_docs.selectors import load_library
from operator_core.errors import ErrorCode
from tests.mcp_docs.base import DocsEndpointTestCase

DEVELOPMENT_PAGE = "development/architecture.md"
# A heading of that page and of no public page.
DEVELOPMENT_HEADING = "Where each contract rule lives"


class DevelopmentFolderLibraryTests(SimpleTestCase):
    def test_pages_in_a_subfolder_are_not_loaded(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        root = Path(directory.name)
        (root / "index.md").write_text("# Index\n\nEvery page.\n")
        (root / "development").mkdir()
        (root / "development" / "architecture.md").write_text("# Architecture\n\nLayers.\n")

        library = load_library(str(root))

        self.assertEqual([page.path for page in library.pages], ["index.md"])


class DevelopmentPagesEndpointTests(DocsEndpointTestCase):
    def test_the_development_page_exists_in_the_repository(self) -> None:
        self.assertTrue((Path(settings.OPERATOR["docs_dir"]) / DEVELOPMENT_PAGE).is_file())

    def test_resources_list_only_the_pages_directly_in_docs(self) -> None:
        top_level = {path.name for path in Path(settings.OPERATOR["docs_dir"]).glob("*.md")}

        resources = self.rpc("resources/list").json()["result"]["resources"]

        self.assertEqual({item["uri"] for item in resources}, {f"docs://{name}" for name in top_level})

    def test_reading_a_development_page_as_a_resource_is_invalid_params(self) -> None:
        response = self.rpc("resources/read", {"uri": f"docs://{DEVELOPMENT_PAGE}"})

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], -32602)

    def test_get_doc_answers_not_found_for_a_development_page(self) -> None:
        result = self.call_tool("get_doc", path=DEVELOPMENT_PAGE)

        self.assertTrue(result["isError"])
        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.NOT_FOUND)

    def test_search_finds_no_development_section(self) -> None:
        result = self.call_tool("search_docs", query=DEVELOPMENT_HEADING, limit=20)

        titles = {hit["title"] for hit in result["structuredContent"]["results"]}
        self.assertNotIn(DEVELOPMENT_HEADING, titles)
