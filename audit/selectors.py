"""Reads of the audit trail: one organization's events over a period, client names, connections' last tool calls.

Tool-call events carry the client's id only (the token names no more, and the
hot path reads nothing), so readers resolve names of registered clients here,
one query for a whole page or export. Clients are DOT's swappable application
model, reached through DOT's accessor like everywhere else.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime

from django.db import connection
from django.db.models import OuterRef, QuerySet, Subquery
from oauth2_provider.models import get_application_model

from audit.models import DETAIL_EXPIRED_TOKEN, AuditAction, AuditEvent
from operator_core.sql import fetch, uuid_param


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


# (person id, organization id, client id): one connection's key in the trail.
ConnectionKey = tuple[int, uuid.UUID, str]


def last_tool_calls(keys: Iterable[ConnectionKey]) -> dict[ConnectionKey, datetime]:
    """When each connection `keys` names last called a tool, for those that ever did (the trail's retention).

    One statement: per key, a single step down the partial `audit_last_tool_call_idx`
    (the newest row of that person, organization and client), whatever the number
    of calls. On PostgreSQL the keys are bound as three arrays and the subquery is
    planned once; planning one subquery per key cost more than running them all.
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return {}
    field = AuditEvent._meta.get_field("occurred_at")
    # Identifiers and the action from the model; every value is bound. The action is written
    # out, not bound: a prepared statement's generic plan could not use the partial index.
    latest = (
        f"(SELECT occurred_at FROM {AuditEvent._meta.db_table} WHERE action = '{AuditAction.TOOL_CALL}'"  # noqa: S608
        " AND person_id = {person} AND organization_id = {organization} AND client_id = {client}"
        " ORDER BY occurred_at DESC LIMIT 1)"
    )
    if connection.vendor == "postgresql":
        sql = (
            f"SELECT {latest.format(person='k.p', organization='k.o', client='k.c')}"  # noqa: S608
            " FROM unnest(%s::integer[], %s::uuid[], %s::text[]) WITH ORDINALITY AS k(p, o, c, n) ORDER BY k.n"
        )
        params: list[object] = [[key[0] for key in wanted], [key[1] for key in wanted], [key[2] for key in wanted]]
        times = [row[0] for row in fetch(sql, params, fields=[field])]
    else:
        # SQLite plans a statement in microseconds: one scalar subquery per key.
        one = latest.format(person="%s", organization="%s", client="%s")
        params = [value for key in wanted for value in (key[0], uuid_param(key[1]), key[2])]
        (row,) = fetch("SELECT " + ", ".join([one] * len(wanted)), params, fields=[field] * len(wanted))
        times = list(row)
    return {key: at for key, at in zip(wanted, times, strict=True) if at is not None}


def expired_connection(digest: str, *, client_id: str) -> tuple[int | None, uuid.UUID | None] | None:
    """(person id, organization id) of the `CONNECTION_EXPIRY` of `client_id` that kept `digest`; None if none.

    One lookup on the partial `audit_expired_token_idx`.
    """
    row = (
        AuditEvent.objects.filter(
            action=AuditAction.CONNECTION_EXPIRY, client_id=client_id, **{f"detail__{DETAIL_EXPIRED_TOKEN}": digest}
        )
        .order_by()
        .values_list("person_id", "organization_id")
        .first()
    )
    return (row[0], row[1]) if row else None
