"""The audit trail in the Django admin: read-only, filterable, never deleted by hand.

Staff with the view permission (superusers have it) browse events newest first
and filter by action, outcome, organization, person, client, tool and date;
"who at acme called which tools through which client last week" is the
organization `acme`, the action "Tool call" and the date "Past 7 days" on one
page. Nobody adds, changes or deletes an event here: rows are written by the
services and removed only by `purge_expired` after the retention. A client's
name, which the client chose, is shown through `display_safe`
(operator_core/display_text.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from audit.models import AuditEvent
from audit.selectors import client_names, with_registered_client_names
from operator_core.display_text import display_safe

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class RegisteredClientName(TypedDict):  # what with_registered_client_names annotates
        registered_client_name: str | None


class ClientFilter(admin.SimpleListFilter):
    title = "client"
    parameter_name = "client_id"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        client_ids = sorted(set(AuditEvent.objects.order_by().values_list("client_id", flat=True).distinct()) - {""})
        names = client_names(client_ids)
        return [(client_id, display_safe(names.get(client_id) or "") or client_id) for client_id in client_ids]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
        value = self.value()
        return queryset.filter(client_id=value) if value else queryset


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = (
        "occurred_at",
        "action",
        "outcome",
        "organization",
        "person_email",
        "client",
        "tool",
        "duration_ms",
        "request_id",
    )
    list_filter = (
        "action",
        "outcome",
        "organization",
        ("person", admin.RelatedOnlyFieldListFilter),
        ClientFilter,
        "tool",
        ("occurred_at", admin.DateFieldListFilter),
    )
    search_fields = ("person__email", "request_id", "client_id", "client_name")
    list_select_related = ("organization", "person")
    list_per_page = 100
    # A COUNT(*) of the whole trail on every page is the slowest query here and says little.
    show_full_result_count = False
    fields = (
        "occurred_at",
        "action",
        "outcome",
        "organization",
        "person",
        "client_id",
        "shown_client_name",
        "tool",
        "duration_ms",
        "request_id",
        "actor",
        "detail",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEvent]:
        return with_registered_client_names(super().get_queryset(request))

    @admin.display(description="Person", ordering="person__email")
    def person_email(self, event: AuditEvent) -> str:
        if event.person_id is None:
            return "—"
        return event.person.email if event.person is not None else f"#{event.person_id} (deleted)"

    @admin.display(description="Client", ordering="client_name")
    def client(self, event: WithAnnotations[AuditEvent, RegisteredClientName]) -> str:
        return display_safe(event.client_name or event.registered_client_name or "") or event.client_id or "—"

    @admin.display(description="Client name")
    def shown_client_name(self, event: AuditEvent) -> str:
        return display_safe(event.client_name)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False
