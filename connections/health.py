"""Connection health: when each connection last worked, and why one failed or stopped, in plain words.

Read from the audit trail (`audit.usage.latest_failures`) over the last
`FAILURE_DAYS` days, which the trail's retention bounds; each failure is
explained by `connections.failure_texts` (docs/managing-connections.md#why-a-connection-stopped).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from audit.failures import ENDING_REASONS, FailureReason
from audit.selectors import client_names
from audit.usage import RecentFailure, latest_failures
from connections.failure_texts import explain
from operator_core.conf import operator_settings
from operator_core.display_text import display_safe
from organizations.models import Organization
from organizations.selectors import emails_of_people, organizations_by_id, roles_in_organization, roles_of_person

FAILURE_DAYS = 30
# Keeps the organization's table readable: one row per person, client and reason, newest first.
FAILURE_ROWS = 100
# (person id, organization id as text, client id)
ConnectionKey = tuple[int | None, str, str]
# {(person id, organization id): their role there}
Roles = dict[tuple[int | None, uuid.UUID | None], str]


@dataclass(frozen=True)
class FailureRow:
    key: ConnectionKey
    occurred_at: datetime
    person_email: str
    organization_name: str
    client_name: str
    reason: FailureReason
    ended: bool
    what: str
    to_do: str


def failure_since(now: datetime) -> datetime:
    """How far back failures are read: `FAILURE_DAYS`, or the audit retention when shorter."""
    return now - timedelta(days=min(FAILURE_DAYS, operator_settings().audit_retention_days))


def _rows(
    failures: list[RecentFailure],
    *,
    organizations: dict[uuid.UUID, Organization],
    roles: Roles,
    emails: dict[int, str],
    admin: bool,
) -> list[FailureRow]:
    names = client_names(failure.client_id for failure in failures if not failure.client_name)
    rows = []
    for failure in failures[:FAILURE_ROWS]:
        organization = organizations.get(failure.organization_id) if failure.organization_id else None
        if failure.organization_id is None:
            # Refused before an organization was chosen (a client's metadata document at sign-in).
            organization_name = ""
        else:
            organization_name = organization.name if organization else "an organization that no longer exists"
        words = explain(
            failure.reason,
            organization=organization_name,
            role=roles.get((failure.person_id, failure.organization_id)),
            admin=admin,
        )
        rows.append(
            FailureRow(
                key=(failure.person_id, str(failure.organization_id), failure.client_id),
                occurred_at=failure.occurred_at,
                person_email=emails.get(failure.person_id, "") if failure.person_id else "",
                organization_name=organization_name,
                # A name or document address a client chose: hidden characters made visible.
                client_name=display_safe(failure.client_name or names.get(failure.client_id, failure.client_id)),
                reason=failure.reason,
                ended=failure.reason in ENDING_REASONS,
                what=words.what,
                to_do=words.to_do,
            )
        )
    return rows


def failures_of_person(person: User) -> list[FailureRow]:
    """The person's failures of the last `FAILURE_DAYS`, into every organization, newest first, for their eyes."""
    failures = latest_failures(since=failure_since(timezone.now()), person_id=person.pk)
    roles: Roles = {(person.pk, organization): role for organization, role in roles_of_person(person.pk).items()}
    organizations = organizations_by_id({f.organization_id for f in failures if f.organization_id})
    return _rows(failures, organizations=organizations, roles=roles, emails={}, admin=False)


def failures_in_organization(organization: Organization) -> list[FailureRow]:
    """Every failure in the organization over the last `FAILURE_DAYS`, newest first, for its admins."""
    failures = latest_failures(since=failure_since(timezone.now()), organization_id=organization.pk)
    roles: Roles = {(person, organization.pk): role for person, role in roles_in_organization(organization.pk).items()}
    emails = emails_of_people({failure.person_id for failure in failures if failure.person_id})
    return _rows(failures, organizations={organization.pk: organization}, roles=roles, emails=emails, admin=True)


def newest_failure_since(failures: list[FailureRow], *, key: ConnectionKey, since: datetime) -> FailureRow | None:
    """The newest of `failures` (newest first) of the connection `key` at or after `since`; None if none."""
    return next((row for row in failures if row.key == key and row.occurred_at >= since), None)
