"""Reads of the audit trail: one organization's events over a period, client names, tool-call activity.

Tool-call events carry the client's id only (the token names no more, and the
hot path reads nothing), so readers resolve names of registered clients here,
one query for a whole page or export. Clients are DOT's swappable application
model, reached through DOT's accessor like everywhere else.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, OuterRef, QuerySet, Subquery
from oauth2_provider.models import get_application_model

from audit.models import AuditAction, AuditEvent


def events_for_organization(
    organization_id: uuid.UUID | str, *, since: datetime, until: datetime
) -> QuerySet[AuditEvent]:
    """Events of one organization with `since <= occurred_at < until`, oldest first."""
    return (
        AuditEvent.objects.filter(organization_id=organization_id, occurred_at__gte=since, occurred_at__lt=until)
        .select_related("organization", "person", "actor")
        .order_by("occurred_at", "id")
    )


def client_names(client_ids: Iterable[str]) -> dict[str, str]:
    """{client_id: name} for the registered clients among `client_ids` that have a name."""
    wanted = {client_id for client_id in client_ids if client_id}
    if not wanted:
        return {}
    rows = get_application_model().objects.filter(client_id__in=wanted).exclude(name="")
    return dict(rows.values_list("client_id", "name"))


def with_registered_client_names(events: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
    """`events` with `registered_client_name`: the name of the registered client, or None.

    A correlated subquery on the unique `client_id`: evaluated for the rows a page
    shows, and left out of the page's COUNT.
    """
    names = get_application_model().objects.filter(client_id=OuterRef("client_id")).values("name")[:1]
    return events.annotate(registered_client_name=Subquery(names))


@dataclass(frozen=True)
class ToolCallActivity:
    calls: int
    last_call_at: datetime


def tool_call_activity(
    *, since: datetime, organization_id: uuid.UUID | None = None, person_id: int | None = None
) -> dict[tuple[int, str, str], ToolCallActivity]:
    """Tool calls since `since`, by (person id, organization id as text, client id): how many, and the last.

    One grouped query over the organization's (or the person's) events, served by
    the trail's (organization, occurred_at) or (person, occurred_at) index.
    """
    events = AuditEvent.objects.filter(action=AuditAction.TOOL_CALL, occurred_at__gte=since)
    if organization_id is not None:
        events = events.filter(organization_id=organization_id)
    if person_id is not None:
        events = events.filter(person_id=person_id)
    rows = (
        events.order_by()
        .values("person_id", "organization_id", "client_id")
        .annotate(calls=Count("id"), last_call_at=Max("occurred_at"))
    )
    return {
        (row["person_id"], str(row["organization_id"]), row["client_id"]): ToolCallActivity(
            calls=row["calls"], last_call_at=row["last_call_at"]
        )
        for row in rows
    }
