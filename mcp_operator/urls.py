"""Routes of the operator server (docs/index.md#addresses-at-a-glance).

The `/api/mcp/` catch-all belongs to mcp_docs.
"""

from django.urls import path

from mcp_operator import views

app_name = "mcp_operator"

urlpatterns = [
    path("api/mcp/operator", views.operator_mcp, name="endpoint"),
    path(".well-known/mcp", views.well_known_mcp_view, name="well-known-mcp"),
    path(".well-known/mcp/server-card.json", views.server_card_view, name="server-card"),
]
