"""The docs endpoint's MCP resources: every page as `docs://<path>` (text/markdown)."""

from typing import Any

from mcp_docs.selectors import docs_library
from operator_core.mcp.transport import UnknownResource

MARKDOWN = "text/markdown"


class DocsResources:
    """Satisfies `operator_core.mcp.transport.ResourceSet`: the same pages for every caller, index first."""

    def list_resources(self, principal: object) -> list[dict[str, Any]]:
        return [
            {
                "uri": page.uri,
                "name": page.path,
                "title": page.title,
                "mimeType": MARKDOWN,
                "size": len(page.markdown.encode("utf-8")),
            }
            for page in docs_library().pages
        ]

    def read_resource(self, principal: object, uri: str) -> dict[str, Any]:
        """The page's Markdown; raises `UnknownResource` for any URI that is not a page."""
        page = docs_library().page_by_uri(uri)
        if page is None:
            raise UnknownResource(uri)
        return {"contents": [{"uri": page.uri, "mimeType": MARKDOWN, "text": page.markdown}]}
