"""Writes of the audit trail: one INSERT per event, the retention purge and the daily usage roll-up.

Every writer records through `record_event`, inside its own transaction when it
has one, so an event is kept exactly when what it describes is. A tool call's
record is on the hot path: the INSERT is built once per process, costs one
statement (no model instance, no signals, no RETURNING), and on PostgreSQL
commits without waiting for the disk (`record_tool_call`). The request id
comes from the request being served (`operator_core.request_log`). Why, and
what an asynchronous commit may lose: docs/development/decisions.md#audit-trail.

Callers pass ids and names only. Nothing here accepts a token, a code or a
secret, and nothing may put one into `detail`.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, cast
from zoneinfo import ZoneInfo

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Max, Q
from django.utils import timezone

from audit.models import OUTCOME_OK, AuditAction, AuditEvent, DailyUsage, UsageFigure
from audit.usage import count_events, day_start
from operator_core.conf import operator_settings
from operator_core.request_log import current_request_id
from operator_core.sql import execute

# The columns of one INSERT, in the order of `_row`.
_COLUMNS = (
    "occurred_at",
    "action",
    "outcome",
    "person",
    "organization",
    "client_id",
    "client_name",
    "tool",
    "duration_ms",
    "request_id",
    "actor",
    "detail",
)
_NAME_LENGTH = AuditEvent._meta.get_field("client_name").max_length


def record_tool_call(
    *,
    person_id: int,
    organization_id: str | uuid.UUID | None,
    client_id: str,
    tool: str,
    outcome: str,
    duration_ms: float,
) -> None:
    """Append one tool call: a single INSERT, committed without waiting for the disk outside a transaction."""
    execute(
        *tool_call_statement(
            connections[DEFAULT_DB_ALIAS],
            person_id=person_id,
            organization_id=organization_id,
            client_id=client_id,
            tool=tool,
            outcome=outcome,
            duration_ms=duration_ms,
        )
    )


def tool_call_statement(
    db: BaseDatabaseWrapper,
    *,
    person_id: int,
    organization_id: str | uuid.UUID | None,
    client_id: str,
    tool: str,
    outcome: str,
    duration_ms: float,
) -> tuple[str, list[object]]:
    """The INSERT of `record_tool_call` and its parameters adapted for `db`, for a caller that sends it
    itself: as a CTE of a tool call's read (operator_core.sql.sent_with_settling_read)."""
    values = _row(
        AuditAction.TOOL_CALL,
        outcome=outcome,
        person_id=person_id,
        organization_id=organization_id,
        client_id=client_id,
        tool=tool,
        duration_ms=duration_ms,
    )
    sql, fields = _insert_statement(db.vendor, asynchronous=not db.in_atomic_block and db.vendor == "postgresql")
    # `db` is the wrapper itself, not the `connection` proxy: each read through the proxy is a thread-local lookup.
    return sql, [field.get_db_prep_save(value, db) for field, value in zip(fields, values, strict=True)]


def record_event(
    action: AuditAction,
    *,
    outcome: str = OUTCOME_OK,
    person_id: int | None = None,
    organization_id: str | uuid.UUID | None = None,
    client_id: str = "",
    client_name: str = "",
    actor_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append one event to the trail: a single INSERT, in the caller's transaction if it has one."""
    values = _row(
        action,
        outcome=outcome,
        person_id=person_id,
        organization_id=organization_id,
        client_id=client_id,
        client_name=client_name,
        actor_id=actor_id,
        detail=detail,
    )
    _insert(connections[DEFAULT_DB_ALIAS], values, asynchronous=False)


def _row(
    action: AuditAction,
    *,
    outcome: str,
    person_id: int | None,
    organization_id: str | uuid.UUID | None,
    client_id: str,
    client_name: str = "",
    tool: str = "",
    duration_ms: float | None = None,
    actor_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> tuple[Any, ...]:
    """The values of one row, in the order of `_COLUMNS`."""
    return (
        timezone.now(),
        str(action),
        str(outcome),
        person_id,
        organization_id,
        client_id,
        client_name[:_NAME_LENGTH],
        tool,
        duration_ms,
        current_request_id() or "",
        actor_id,
        detail or {},
    )


def _insert(db: BaseDatabaseWrapper, values: tuple[Any, ...], *, asynchronous: bool) -> None:
    sql, fields = _insert_statement(db.vendor, asynchronous=asynchronous)
    # `db` is the wrapper itself, not the `connection` proxy: every field's adaptation reads
    # the backend's ops and features, and each read through the proxy is a thread-local lookup.
    # One statement, so that PostgreSQL keeps it prepared like the tool calls' reads.
    execute(sql, [field.get_db_prep_save(value, db) for field, value in zip(fields, values, strict=True)])


@functools.cache
def _insert_statement(vendor: str, *, asynchronous: bool) -> tuple[str, tuple[Field, ...]]:
    meta = AuditEvent._meta
    fields = tuple(cast(Field, meta.get_field(name)) for name in _COLUMNS)  # columns, never a reverse relation
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    columns = ", ".join(quote(cast(str, field.column)) for field in fields)  # set on every concrete field
    placeholders = ", ".join(["%s"] * len(fields))
    # Identifiers from the model, quoted by the backend; values are parameters. INSERT ... SELECT
    # (which types each parameter by its column) with no WHERE of its own, so that a tool call's
    # record can be conditioned on its read (operator_core.sql.Rider).
    insert = f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT {placeholders}"
    if asynchronous:
        # set_config(..., true) holds until the statement's own transaction ends, so that
        # transaction's commit does not wait for the WAL flush (what SET LOCAL would do, in
        # one statement).
        return f"{insert} FROM (SELECT set_config('synchronous_commit', 'off', true)) AS asynchronous_commit", fields
    return insert, fields


# Headless claims for an email with no active account name no person: they are operational
# records, kept as long as the claims themselves (agent_auth.services), not for the retention.
ANONYMOUS_CLAIM_ACTIONS = (AuditAction.CLAIM_START, AuditAction.CLAIM_END)
ANONYMOUS_CLAIM_RETENTION = timedelta(days=1)
# The detail of a headless start whose email was not sent (its recipient had had enough this
# hour, agent_auth.recipient_limit). Anyone can cause one for a known person's email, up to
# ~1,440 a day: kept as briefly as the person-less ones.
SUPPRESSED_EMAIL_DETAIL = {"verification_email": "suppressed"}


def purge_audit_events(*, now: datetime) -> int:
    """Delete events older than the retention (`OPERATOR["audit_retention_days"]`); return how many went.

    A headless claim's events that name no person (an unknown or inactive email),
    and its starts whose email was suppressed, go after `ANONYMOUS_CLAIM_RETENTION`
    already: anyone can cause them without signing in, and they tell nothing
    about anyone's access.
    """
    cutoff = now - timedelta(days=operator_settings().audit_retention_days)
    deleted, _ = AuditEvent.objects.filter(occurred_at__lt=cutoff).delete()
    unsigned = Q(action__in=ANONYMOUS_CLAIM_ACTIONS, person__isnull=True) | Q(
        action=AuditAction.CLAIM_START, detail=SUPPRESSED_EMAIL_DETAIL
    )
    short_lived, _ = AuditEvent.objects.filter(unsigned, occurred_at__lt=now - ANONYMOUS_CLAIM_RETENTION).delete()
    return deleted + short_lived


# Events are stamped before their INSERT commits (asynchronously for tool calls): a day is
# rolled up only once it ended this long ago, so a late commit still lands in its day.
ROLL_UP_DELAY = timedelta(minutes=5)


def roll_up_usage(*, now: datetime, time_zones: Mapping[uuid.UUID, str]) -> int:
    """Count each organization's days that ended into `DailyUsage`, in its display time zone; return rows written.

    `time_zones` maps every organization to its zone's name. Each organization
    continues from its last rolled-up day (in that zone), or from the first
    whole day the retention keeps; a zone changed since is rolled up afresh.
    Counts older than the retention go, as the events they count do. Safe to
    run at any time: each day is counted once, in one transaction per organization.
    """
    oldest = now - timedelta(days=operator_settings().audit_retention_days)
    DailyUsage.objects.filter(day__lt=oldest.date()).delete()
    written = 0
    for organization_id, zone_name in time_zones.items():
        zone = ZoneInfo(zone_name)
        with transaction.atomic():
            DailyUsage.objects.filter(organization_id=organization_id).exclude(time_zone=zone_name).delete()
            rolled = DailyUsage.objects.filter(
                organization_id=organization_id, time_zone=zone_name, figure=UsageFigure.ROLLED
            ).aggregate(through=Max("day"))["through"]
            first = rolled + timedelta(days=1) if rolled else oldest.astimezone(zone).date() + timedelta(days=1)
            end = (now - ROLL_UP_DELAY).astimezone(zone).date()
            if first >= end:
                continue
            counts = count_events(organization_id, zone=zone, since=day_start(first, zone), until=day_start(end, zone))
            rows = [
                DailyUsage(
                    organization_id=organization_id, time_zone=zone_name, day=day, figure=figure, key=key, count=count
                )
                for (day, figure, key), count in counts.items()
            ]
            days = (end - first).days
            rows += [
                DailyUsage(
                    organization_id=organization_id,
                    time_zone=zone_name,
                    day=first + timedelta(days=offset),
                    figure=UsageFigure.ROLLED,
                    key="",
                    count=0,
                )
                for offset in range(days)
            ]
            DailyUsage.objects.bulk_create(rows, batch_size=1000)
            written += len(rows)
    return written
