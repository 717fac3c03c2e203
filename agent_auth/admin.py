"""Read-only admin for claims and idempotency records: no hash, token or stored answer is shown."""

from django.contrib import admin
from django.http import HttpRequest

from agent_auth.models import Claim, IdempotencyRecord


class _ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Claim)
class ClaimAdmin(_ReadOnlyAdmin):
    list_display = ("id", "user", "status", "attempts", "organization", "created_at", "expires_at", "completed_at")
    list_filter = ("status",)
    fields = ("id", "user", "status", "attempts", "organization", "created_at", "expires_at", "completed_at")
    list_select_related = ("user", "organization")


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(_ReadOnlyAdmin):
    list_display = ("endpoint", "state", "response_status", "created_at", "expires_at")
    list_filter = ("endpoint", "state")
    fields = ("endpoint", "state", "response_status", "created_at", "expires_at")
