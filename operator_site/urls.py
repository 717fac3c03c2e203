"""Root URLconf: each app mounts its own routes; admin sits at /admin/; the error handlers (400, 404, 500)."""

from django.contrib import admin
from django.urls import include, path

from operator_site.admin_sign_in import admin_sign_in

# The MCP endpoints come first: every request walks this list in order, and
# theirs are the requests that come by the thousand.
urlpatterns = [
    path("", include("mcp_operator.urls")),
    path("", include("mcp_docs.urls")),
    path("", include("oauth.urls")),
    path("", include("accounts.urls")),
    path("", include("agent_auth.urls")),
    path("", include("connections.urls")),
    # Before the admin's own routes: its sign-in answers a refusal with 429, as /api/auth/sign-in does.
    path("admin/login/", admin_sign_in, name="admin-sign-in"),
    path("admin/", admin.site.urls),
    path("", include("site_pages.urls")),
]

# A request Django refuses to read (too many form fields): a 400 in the path's own format.
handler400 = "operator_site.request_refusals.bad_request"
handler404 = "site_pages.views.not_found"
handler500 = "site_pages.views.server_error"
