"""Reads of an organization's usage and of recent failures, counted from the audit trail.

`usage_counts` answers the usage page (docs/managing-connections.md#usage-of-an-organization):
days already rolled up come from `DailyUsage`, one indexed range read, and the
days since (today, at least) are counted from the events themselves, a range
of a day or two on the (organization, occurred_at) index. Why a roll-up and
not indexes alone: docs/development/decisions.md#usage-roll-up.

`latest_failures` and `connection_tool_calls` answer the connections pages:
the newest event of each failure reason per person, organization and client
(on the trail's partial failure indexes), and each connection's tool calls,
from the roll-up's `CONNECTION` figure and the days since.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db.models import Count, Max, Q
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import TruncDate

from audit.failures import REFUSAL_KINDS, FailureReason, failure_reason
from audit.models import FAILURE_EVENTS, AuditAction, AuditEvent, DailyUsage, UsageFigure

# (day, figure, key) -> count
UsageCounts = Counter[tuple[date, str, str]]


def day_start(day: date, zone: ZoneInfo) -> datetime:
    """The first instant of `day` in `zone`."""
    return datetime.combine(day, time.min, tzinfo=zone)


# The usage page's figures; the roll-up also counts `CONNECTION`, which the connections page reads.
PAGE_FIGURES = (UsageFigure.TOOL, UsageFigure.CLIENT, UsageFigure.PERSON, UsageFigure.REFUSAL)


def connection_key(person_id: int | None, client_id: str) -> str:
    """A `CONNECTION` figure's key: the person's id and the client's, which holds no space."""
    return f"{person_id or ''} {client_id}"


def count_events(
    organization_id: uuid.UUID | str, *, zone: ZoneInfo, since: datetime, until: datetime, connections: bool = True
) -> UsageCounts:
    """The organization's tool calls by tool, client and person, and its refusals by reason, per day in `zone`.

    One grouped query over `since <= occurred_at < until`. Refusals are keyed by
    their `RefusalKind`; a revocation, a declined consent or an expiry is no refusal.
    With `connections`, tool calls are also counted by person and client (`CONNECTION`).
    """
    rows = (
        AuditEvent.objects.filter(organization_id=organization_id, occurred_at__gte=since, occurred_at__lt=until)
        .filter(Q(action=AuditAction.TOOL_CALL) | FAILURE_EVENTS)
        .annotate(
            day=TruncDate("occurred_at", tzinfo=zone),
            reason=KeyTextTransform("reason", "detail"),
            token_type=KeyTextTransform("token_type", "detail"),
        )
        .order_by()
        .values_list("day", "action", "outcome", "tool", "client_id", "person_id", "reason", "token_type")
        .annotate(events=Count("id"))
    )
    counts: UsageCounts = Counter()
    for day, action, outcome, tool, client_id, person_id, reason, token_type, events in rows:
        if action == AuditAction.TOOL_CALL:
            counts[day, UsageFigure.TOOL, tool] += events
            counts[day, UsageFigure.CLIENT, client_id] += events
            counts[day, UsageFigure.PERSON, str(person_id or "")] += events
            if connections:
                counts[day, UsageFigure.CONNECTION, connection_key(person_id, client_id)] += events
        found = failure_reason(action=action, outcome=outcome, reason=reason, token_type=token_type)
        kind = REFUSAL_KINDS.get(found) if found is not None else None
        if kind is not None:
            counts[day, UsageFigure.REFUSAL, str(kind)] += events
    return counts


def usage_counts(organization_id: uuid.UUID | str, *, zone: ZoneInfo, first_day: date, now: datetime) -> UsageCounts:
    """Counts of every day from `first_day` through today in `zone`: rolled up where the daily job did, live after.

    Two queries: the roll-up's rows for the span, then the events of the days
    after the last rolled-up one. A day rolled up with nothing in it keeps only
    its `ROLLED` marker, which is not returned.
    """
    rolled = DailyUsage.objects.filter(
        organization_id=organization_id,
        time_zone=str(zone.key),
        day__gte=first_day,
        figure__in=[*PAGE_FIGURES, UsageFigure.ROLLED],
    )
    counts: UsageCounts = Counter()
    rolled_through: date | None = None
    for day, figure, key, count in rolled.values_list("day", "figure", "key", "count"):
        if figure == UsageFigure.ROLLED:
            rolled_through = day if rolled_through is None else max(rolled_through, day)
        else:
            counts[day, figure, key] += count
    live_from = first_day if rolled_through is None else max(first_day, rolled_through + timedelta(days=1))
    counts.update(
        count_events(organization_id, zone=zone, since=day_start(live_from, zone), until=now, connections=False)
    )
    return counts


def connection_tool_calls(
    organization_id: uuid.UUID, *, zone: ZoneInfo, first_day: date, now: datetime
) -> dict[tuple[int | None, str], int]:
    """Tool calls from `first_day` through now, by (person id, client id): the roll-up's, then the live days'.

    Two queries, as `usage_counts`: the `CONNECTION` rows of the span, then the
    tool calls after the last rolled-up day, grouped by person and client.
    """
    rolled = DailyUsage.objects.filter(
        organization_id=organization_id,
        time_zone=str(zone.key),
        day__gte=first_day,
        figure__in=[UsageFigure.CONNECTION, UsageFigure.ROLLED],
    )
    calls: Counter[tuple[int | None, str]] = Counter()
    rolled_through: date | None = None
    for day, figure, key, count in rolled.values_list("day", "figure", "key", "count"):
        if figure == UsageFigure.ROLLED:
            rolled_through = day if rolled_through is None else max(rolled_through, day)
        else:
            person, _, client_id = key.partition(" ")
            calls[int(person) if person else None, client_id] += count
    live_from = first_day if rolled_through is None else max(first_day, rolled_through + timedelta(days=1))
    live = (
        AuditEvent.objects.filter(
            organization_id=organization_id,
            occurred_at__gte=day_start(live_from, zone),
            occurred_at__lt=now,
            action=AuditAction.TOOL_CALL,
        )
        .order_by()
        .values_list("person_id", "client_id")
        .annotate(events=Count("id"))
    )
    for person_id, client_id, events in live:
        calls[person_id, client_id] += events
    return dict(calls)


@dataclass(frozen=True)
class RecentFailure:
    person_id: int | None
    organization_id: uuid.UUID | None
    client_id: str
    client_name: str
    reason: FailureReason
    occurred_at: datetime


def latest_failures(
    *, since: datetime, person_id: int | None = None, organization_id: uuid.UUID | None = None
) -> list[RecentFailure]:
    """The newest event of each failure reason since `since`, per person, organization and client; newest first.

    One grouped query on the (person, occurred_at) or (organization, occurred_at)
    index: a client that was rate-limited ten thousand times is one row.
    """
    events = AuditEvent.objects.filter(FAILURE_EVENTS, occurred_at__gte=since)
    if person_id is not None:
        events = events.filter(person_id=person_id)
    if organization_id is not None:
        events = events.filter(organization_id=organization_id)
    rows = (
        events.annotate(
            reason=KeyTextTransform("reason", "detail"), token_type=KeyTextTransform("token_type", "detail")
        )
        .order_by()
        .values_list("person_id", "organization_id", "client_id", "action", "outcome", "reason", "token_type")
        .annotate(last=Max("occurred_at"), name=Max("client_name"))
    )
    newest: dict[tuple[int | None, uuid.UUID | None, str, FailureReason], RecentFailure] = {}
    for person, organization, client_id, action, outcome, reason, token_type, last, name in rows:
        found = failure_reason(action=action, outcome=outcome, reason=reason, token_type=token_type)
        if found is None:
            continue
        key = (person, organization, client_id, found)
        if key not in newest or newest[key].occurred_at < last:
            newest[key] = RecentFailure(person, organization, client_id, name or "", found, last)
    return sorted(newest.values(), key=lambda failure: failure.occurred_at, reverse=True)
