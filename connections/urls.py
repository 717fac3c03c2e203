"""Routes of the connections pages (docs/managing-connections.md)."""

from django.urls import path

from connections import views

app_name = "connections"

urlpatterns = [
    path("account/connections/", views.my_connections, name="mine"),
    path("organizations/<slug:slug>/connections/", views.organization_connections, name="organization"),
    path("organizations/<slug:slug>/connections/policy", views.change_client_policy, name="organization-policy"),
    path("organizations/<slug:slug>/usage/", views.organization_usage, name="usage"),
    path("organizations/<slug:slug>/usage/export.csv", views.organization_usage_csv, name="usage-csv"),
]
