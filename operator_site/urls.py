"""Root URLconf: each app mounts its own routes; admin sits at /admin/."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("oauth.urls")),
    path("", include("agent_auth.urls")),
    path("", include("mcp_docs.urls")),
    path("", include("mcp_operator.urls")),
]
