"""Assertions on the audit trail shared by the tests of every writer."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.test import TestCase

from audit.models import AuditEvent


def only_event(test: TestCase, **filters: Any) -> AuditEvent:
    """The one event matching `filters`; fails unless there is exactly one."""
    events = list(AuditEvent.objects.filter(**filters))
    test.assertEqual(len(events), 1, [(event.action, event.outcome) for event in AuditEvent.objects.all()])
    return events[0]


def field_values(event: AuditEvent) -> list[str]:
    """Every stored value of the row as text, the JSON detail included, but the time.

    The time is left out: its microseconds are six digits, which a six-digit
    headless code would match once in a million runs.
    """
    values = []
    for field in AuditEvent._meta.concrete_fields:
        if field.name == "occurred_at":
            continue
        value = getattr(event, field.attname)
        values.append(json.dumps(value, default=str) if isinstance(value, dict) else str(value))
    return values


def assert_holds_no_secret(test: TestCase, *secrets: str) -> None:
    """No event holds any of `secrets`, nor its SHA-256 checksum (how DOT looks tokens up)."""
    forbidden = [secret for secret in secrets if secret]
    forbidden += [hashlib.sha256(secret.encode()).hexdigest() for secret in forbidden]
    for event in AuditEvent.objects.all():
        for value in field_values(event):
            for secret in forbidden:
                test.assertNotIn(secret, value, f"{event.action} holds a secret")
