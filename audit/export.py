"""The audit trail as CSV or JSON lines, for `manage.py export_audit` (docs/operations.md#audit-trail).

One row per event, oldest first, with the person's and the actor's email and
the organization's slug joined in, and the client's name where the event lacks
one. Streams: the events are read in chunks, never all at once. Every CSV cell
goes through `operator_core.csv_cells`, so no value a stranger chose (a
client's name) opens as a formula. In both formats a client's name goes
through `operator_core.display_text.display_safe`, which shows a character
that hides or reorders text as U+FFFD; the JSON lines hold every other value as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import TextIOBase
from typing import Any

from django.db.models import QuerySet

from audit.models import AuditEvent
from audit.selectors import client_names
from operator_core.csv_cells import SafeCsvWriter
from operator_core.display_text import display_safe

FORMAT_CSV = "csv"
FORMAT_JSON_LINES = "jsonl"
FORMATS = (FORMAT_CSV, FORMAT_JSON_LINES)
COLUMNS = (
    "occurred_at",
    "action",
    "outcome",
    "organization_id",
    "organization_slug",
    "person_id",
    "person_email",
    "client_id",
    "client_name",
    "tool",
    "duration_ms",
    "request_id",
    "actor_email",
    "detail",
)
_CHUNK = 2000


def export_rows(events: QuerySet[AuditEvent]) -> Iterator[dict[str, Any]]:
    names = client_names(events.order_by().values_list("client_id", flat=True).distinct())
    for event in events.iterator(chunk_size=_CHUNK):
        yield {
            "occurred_at": event.occurred_at.isoformat(),
            "action": event.action,
            "outcome": event.outcome,
            "organization_id": str(event.organization_id) if event.organization_id else None,
            "organization_slug": event.organization.slug if event.organization else None,
            "person_id": event.person_id,
            "person_email": event.person.email if event.person else None,
            "client_id": event.client_id,
            "client_name": display_safe(event.client_name or names.get(event.client_id, "")),
            "tool": event.tool,
            "duration_ms": event.duration_ms,
            "request_id": event.request_id,
            "actor_email": event.actor.email if event.actor else None,
            "detail": event.detail,
        }


def write_events(events: QuerySet[AuditEvent], stream: TextIOBase, *, file_format: str) -> int:
    """Write `events` to `stream` in `file_format` ("csv" or "jsonl"); return how many rows."""
    if file_format not in FORMATS:
        raise ValueError(f"file_format must be one of {FORMATS}")
    count = 0
    writer = SafeCsvWriter(stream, fieldnames=COLUMNS) if file_format == FORMAT_CSV else None
    if writer is not None:
        writer.writeheader()
    for row in export_rows(events):
        if writer is not None:
            writer.writerow({**row, "detail": json.dumps(row["detail"], sort_keys=True)})
        else:
            stream.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
        count += 1
    return count
