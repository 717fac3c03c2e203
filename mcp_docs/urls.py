"""Routes of mcp_docs: the docs MCP endpoint, the deprecation policy page, and the
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
    path("docs/versioning", views.deprecation_policy, name="deprecation-policy"),
    re_path(r"^api/mcp(?:/(?!(?:operator|docs)$).*)?$", views.unknown_mcp_path, name="unknown-mcp-path"),
]
