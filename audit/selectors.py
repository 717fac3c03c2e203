"""Reads of the audit trail: one organization's events over a period, and client names.

Tool-call events carry the client's id only (the token names no more, and the
hot path reads nothing), so readers resolve names of registered clients here,
one query for a whole page or export. Clients are DOT's swappable application
model, reached through DOT's accessor like everywhere else.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime

from django.db.models import OuterRef, QuerySet, Subquery
from oauth2_provider.models import get_application_model

from audit.models import AuditEvent


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
