"""The Django admin of clients: DOT's, with how each client registered and when it was last used."""

from django.contrib import admin
from oauth2_provider.admin import ApplicationAdmin

from oauth.models import Application, ClientPolicy


class OperatorApplicationAdmin(ApplicationAdmin):
    list_display = ("name", "client_id", "registration_source", "client_type", "last_used_at", "created")
    list_filter = ("registration_source", "client_type")
    search_fields = ("name", "client_id")
    readonly_fields = (*ApplicationAdmin.readonly_fields, "last_used_at")
    ordering = ("-last_used_at",)


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
