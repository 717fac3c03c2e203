"""The Django admin of clients: DOT's, with how each client registered and when it was last used.

A client's name is listed through `display_safe` (operator_core/display_text.py), and
`Application.__str__` uses it too, so no name a client chose reorders or hides text here.
"""

from django.contrib import admin
from oauth2_provider.admin import ApplicationAdmin

from oauth.models import Application, ClientPolicy
from operator_core.display_text import display_safe


class OperatorApplicationAdmin(ApplicationAdmin):
    list_display = ("client_name", "client_id", "registration_source", "client_type", "last_used_at", "created")
    list_filter = ("registration_source", "client_type")
    search_fields = ("name", "client_id")
    readonly_fields = (*ApplicationAdmin.readonly_fields, "last_used_at")
    ordering = ("-last_used_at",)

    @admin.display(description="Name", ordering="name")
    def client_name(self, application: Application) -> str:
        # A name a client chose: shown with its hidden characters visible (operator_core/display_text.py).
        return display_safe(application.name)


# DOT registers its own admin for the application model when its app loads, before ours.
admin.site.unregister(Application)
admin.site.register(Application, OperatorApplicationAdmin)


@admin.register(ClientPolicy)
class ClientPolicyAdmin(admin.ModelAdmin):
    """Read-only: an organization's admins change the policy on its connections page, which audits it."""

    list_display = ("organization", "only_listed", "dynamic_clients", "metadata_hosts", "updated_at")
    readonly_fields = ("organization", "only_listed", "dynamic_clients", "metadata_hosts", "applications", "updated_at")

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
