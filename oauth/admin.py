"""The Django admin of clients and tokens: DOT's, with how each client registered and when it was last used.

A client's name is listed through `display_safe` (operator_core/display_text.py), and
`Application.__str__` uses it too, so no name a client chose reorders or hides text here.
DOT's admin forbids deleting tokens, so staff end a client's connections with its
"Revoke selected" actions; each connection they end is recorded first, so that its
person can read why (docs/managing-connections.md#why-a-connection-stopped).
"""

from django.contrib import admin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from oauth2_provider.admin import AccessTokenAdmin, ApplicationAdmin, RefreshTokenAdmin

from oauth.connections import record_staff_revocations
from oauth.models import AccessToken, Application, ClientPolicy, RefreshToken
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


class OperatorRefreshTokenAdmin(RefreshTokenAdmin):
    @admin.action(description="Revoke selected refresh tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[RefreshToken]) -> None:
        with transaction.atomic():
            record_staff_revocations(queryset, actor_id=request.user.pk)
            super().revoke_tokens(request, queryset)


class OperatorAccessTokenAdmin(AccessTokenAdmin):
    @admin.action(description="Revoke selected access tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[AccessToken]) -> None:
        # DOT revokes an access token's refresh token with it, which ends its connection.
        with transaction.atomic():
            record_staff_revocations(RefreshToken.objects.filter(access_token__in=queryset), actor_id=request.user.pk)
            super().revoke_tokens(request, queryset)


# DOT registers its own admins for these models when its app loads, before ours.
for model, model_admin in (
    (Application, OperatorApplicationAdmin),
    (RefreshToken, OperatorRefreshTokenAdmin),
    (AccessToken, OperatorAccessTokenAdmin),
):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)


@admin.register(ClientPolicy)
class ClientPolicyAdmin(admin.ModelAdmin):
    """Read-only: an organization's admins change the policy on its connections page, which audits it."""

    list_display = ("organization", "only_listed", "dynamic_clients", "metadata_hosts", "updated_at")
    readonly_fields = ("organization", "only_listed", "dynamic_clients", "metadata_hosts", "applications", "updated_at")

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
