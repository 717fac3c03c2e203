"""Paths around the docs endpoint: the 404 catch-all and the deprecation policy page."""

from django.conf import settings
from django.urls import resolve

from mcp_docs.selectors import load_library
from tests.mcp_docs.base import DocsEndpointTestCase


class UnknownMcpPathTests(DocsEndpointTestCase):
    def test_unknown_path_under_api_mcp_is_404_json(self) -> None:
        response = self.client.get("/api/mcp/whatever")

        self.assertEqual(response.status_code, 404)
        self.assertEqual(response.json()["error"]["code"], "not_found")

    def test_post_to_an_unknown_mcp_path_is_404(self) -> None:
        response = self.client.post("/api/mcp/operator/extra", "{}", content_type="application/json")

        self.assertEqual(response.status_code, 404)

    def test_bare_api_mcp_is_404(self) -> None:
        self.assertEqual(self.client.get("/api/mcp/").status_code, 404)

    def test_catch_all_leaves_the_operator_endpoint_alone(self) -> None:
        match = resolve("/api/mcp/operator")

        self.assertNotEqual(match.view_name, "mcp_docs:unknown-mcp-path")

    def test_docs_endpoint_is_not_caught(self) -> None:
        self.assertEqual(resolve("/api/mcp/docs").view_name, "mcp_docs:endpoint")


class DeprecationPolicyPageTests(DocsEndpointTestCase):
    def test_policy_url_setting_points_at_the_served_page(self) -> None:
        self.assertEqual(
            settings.OPERATOR["deprecation_policy_url"], f"{settings.OPERATOR['base_url']}/docs/versioning"
        )

    def test_policy_page_is_served_as_html_to_browsers(self) -> None:
        response = self.client.get("/docs/versioning", headers={"Accept": "text/html,*/*;q=0.8"})

        self.assertEqual(response.status_code, 200)
        self.assertTrue(response["Content-Type"].startswith("text/html"))
        self.assertContains(response, '<h1 id="versioning-and-deprecation-policy">Versioning and deprecation policy')

    def test_policy_page_is_served_as_markdown_on_request(self) -> None:
        response = self.client.get("/docs/versioning", headers={"Accept": "text/markdown"})

        self.assertEqual(response["Content-Type"], "text/markdown; charset=utf-8")
        expected = load_library(settings.OPERATOR["docs_dir"]).page("versioning.md").markdown
        self.assertEqual(response.content.decode(), expected)
