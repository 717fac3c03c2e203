"""Routes of the headless path (docs/headless.md): exact paths, no trailing slash."""

from django.urls import path

from agent_auth import views

app_name = "agent_auth"

urlpatterns = [
    path("api/agent/auth", views.start_claim_view, name="start"),
    path("api/agent/auth/claim/complete", views.complete_claim_view, name="complete"),
    path("auth.md", views.auth_markdown_view, name="auth-md"),
]
