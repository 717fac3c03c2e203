"""The docs endpoint's tools, called through the real transport: search_docs and get_doc."""

import json
import tempfile
from pathlib import Path

from django.conf import settings
from django.test import override_settings

from operator_core.errors import ErrorCode
from tests.mcp_docs.base import DocsEndpointTestCase

PAGES = {
    "index.md": "# Index\n\n- [Authentication](authentication.md)\n",
    "authentication.md": (
        "# Authentication\n\nHow clients sign in.\n\n"
        "## Refresh tokens\n\nA refresh token lives 30 days.\n\n### Rotation\n\nEach refresh rotates it.\n\n"
        "## Access tokens\n\nAn access token lives one hour.\n"
    ),
    "limits.md": "# Limits\n\nAccess token one hour; refresh token 30 days.\n",
}


class DocsToolsTestCase(DocsEndpointTestCase):
    """Runs against a small docs directory of its own, so results are exact."""

    def setUp(self) -> None:
        super().setUp()
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        for name, text in PAGES.items():
            (Path(directory.name) / name).write_text(text)
        overridden = override_settings(OPERATOR={**settings.OPERATOR, "docs_dir": directory.name})
        overridden.enable()
        self.addCleanup(overridden.disable)


class SearchDocsToolTests(DocsToolsTestCase):
    def test_search_returns_ranked_sections_with_paths_and_anchors(self) -> None:
        result = self.call_tool("search_docs", query="refresh token")

        hits = result["structuredContent"]["results"]
        self.assertEqual((hits[0]["path"], hits[0]["section"]), ("authentication.md", "refresh-tokens"))
        self.assertEqual(hits[0]["uri"], "docs://authentication.md#refresh-tokens")
        self.assertEqual(result["structuredContent"]["query"], "refresh token")

    def test_text_content_holds_the_same_json_as_structured_content(self) -> None:
        result = self.call_tool("search_docs", query="refresh token")

        self.assertEqual(json.loads(result["content"][0]["text"]), result["structuredContent"])

    def test_same_query_twice_gives_the_same_results(self) -> None:
        first = self.call_tool("search_docs", query="access token")

        second = self.call_tool("search_docs", query="access token")

        self.assertEqual(first["structuredContent"], second["structuredContent"])

    def test_limit_defaults_to_five_and_caps_the_results(self) -> None:
        result = self.call_tool("search_docs", query="token", limit=1)

        self.assertEqual(len(result["structuredContent"]["results"]), 1)

    def test_limit_above_twenty_is_invalid_arguments(self) -> None:
        result = self.call_tool("search_docs", query="token", limit=21)

        self.assertTrue(result["isError"])
        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result["structuredContent"]["error"]["field"], "limit")

    def test_query_longer_than_two_hundred_characters_is_invalid_arguments(self) -> None:
        result = self.call_tool("search_docs", query="t" * 201)

        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result["structuredContent"]["error"]["field"], "query")

    def test_unknown_argument_is_invalid_arguments(self) -> None:
        result = self.call_tool("search_docs", query="token", organizationSlug="acme")

        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.INVALID_ARGUMENTS)


class GetDocToolTests(DocsToolsTestCase):
    def test_page_is_returned_whole_with_its_outline(self) -> None:
        result = self.call_tool("get_doc", path="authentication.md")

        content = result["structuredContent"]
        self.assertEqual(content["title"], "Authentication")
        self.assertEqual(content["markdown"], PAGES["authentication.md"])
        self.assertEqual(
            [item["section"] for item in content["sections"]],
            ["authentication", "refresh-tokens", "rotation", "access-tokens"],
        )
        self.assertNotIn("section", content)

    def test_section_is_returned_with_its_subsections(self) -> None:
        result = self.call_tool("get_doc", path="authentication.md", section="refresh-tokens")

        content = result["structuredContent"]
        self.assertEqual(content["section"], "refresh-tokens")
        self.assertEqual(content["title"], "Refresh tokens")
        self.assertTrue(content["markdown"].startswith("## Refresh tokens"))
        self.assertIn("### Rotation", content["markdown"])
        self.assertNotIn("Access tokens", content["markdown"])

    def test_path_without_extension_names_the_same_page(self) -> None:
        result = self.call_tool("get_doc", path="docs/authentication")

        self.assertEqual(result["structuredContent"]["path"], "authentication.md")

    def test_missing_page_is_not_found(self) -> None:
        result = self.call_tool("get_doc", path="nope.md")

        self.assertTrue(result["isError"])
        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.NOT_FOUND)

    def test_missing_section_is_not_found(self) -> None:
        result = self.call_tool("get_doc", path="authentication.md", section="nope")

        self.assertTrue(result["isError"])
        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.NOT_FOUND)

    def test_path_outside_the_docs_directory_is_not_found(self) -> None:
        result = self.call_tool("get_doc", path="../operator_site/settings.py")

        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.NOT_FOUND)
