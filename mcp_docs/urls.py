"""Routes of mcp_docs: the docs MCP endpoint, the documentation pages, and the
404 for every other path under /api/mcp/.

The root URLconf includes these before mcp_operator's, so the catch-all leaves
`api/mcp/operator` alone explicitly.
"""

from django.urls import path, re_path

from mcp_docs import views
from mcp_docs.endpoint import docs_endpoint

app_name = "mcp_docs"

urlpatterns = [
    path("api/mcp/docs", docs_endpoint().as_view(), name="endpoint"),
    path("docs/", views.docs_page, name="docs-index"),
    # A slug has no "/" nor ".": docs/development/ and files beside the pages are never reachable.
    path("docs/<slug:page>", views.docs_page, name="page"),
    re_path(r"^api/mcp(?:/(?!(?:operator|docs)$).*)?$", views.unknown_mcp_path, name="unknown-mcp-path"),
]
