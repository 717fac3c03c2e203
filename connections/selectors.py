"""Reads behind the connections pages: every live grant, OAuth or headless, as one kind of row.

A row joins what the authorization server knows of a connection (oauth.connections,
agent_auth.connections) with its tool calls from the audit trail: the last one,
a lookup per connection on an index (`audit.selectors.last_tool_calls`), and on
the organization's page how many in 30 days, from the daily roll-up and the days
since (`audit.usage.connection_tool_calls`). Tool calls are recorded per person,
organization and client, so two connections of one person with one client into
one organization show the same calls (docs/managing-connections.md#what-the-pages-show).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils import timezone

from agent_auth.connections import HeadlessConnection, headless_connections
from audit.selectors import last_tool_calls
from audit.usage import connection_tool_calls
from connections.health import FailureRow, newest_failure_since
from oauth.client_policy import client_policy_or_none, metadata_host
from oauth.connections import OAuthConnection, oauth_connections
from oauth.models import Application
from operator_core.display_text import display_safe
from organizations.models import Organization
from organizations.selectors import display_zone

ACTIVITY_DAYS = 30
Connection = OAuthConnection | HeadlessConnection

HEADLESS_REGISTRATION = "Headless path (email code)"


def registration_label(application: Application) -> str:
    """How a client registered, in words; a metadata document client shows the host vouching for it."""
    source = application.registration_source
    if source == Application.RegistrationSource.DCR:
        return "Dynamic registration (name not verified)"
    if source == Application.RegistrationSource.CIMD:
        return f"Client ID Metadata Document ({metadata_host(application.client_id)})"
    return "Registered by the service's operators"


@dataclass(frozen=True)
class ConnectionRow:
    person_email: str
    organization: Organization
    client_id: str
    client_name: str
    registration: str
    scopes: list[str]
    authorized_at: datetime
    last_used_at: datetime
    # Counted on the organization's page only (None on the person's own).
    tool_calls: int | None
    last_call_at: datetime | None
    # The last code exchange or refresh; None for a headless connection, which never refreshes.
    last_refresh_at: datetime | None
    # The newest failure of this person, organization and client since the connection was authorized.
    failure: FailureRow | None
    # The issuer of the organization's provider that granted it (enterprise-managed authorization); else "".
    granted_by_issuer: str = ""


def _client_id(connection: Connection) -> str:
    return connection.application.client_id if isinstance(connection, OAuthConnection) else connection.client_id


def _row(
    connection: Connection,
    last_calls: dict[tuple[int, uuid.UUID, str], datetime],
    calls: dict[tuple[int | None, str], int] | None,
    failures: list[FailureRow],
) -> ConnectionRow:
    granted_by_issuer = ""
    if isinstance(connection, OAuthConnection):
        client_id, client_name = connection.application.client_id, connection.application.name
        registration, last_token_at = registration_label(connection.application), connection.last_token_at
        granted_by_issuer = connection.granted_by.issuer if connection.granted_by else ""
    else:
        client_id, client_name = connection.client_id, connection.client_name
        registration, last_token_at = HEADLESS_REGISTRATION, connection.authorized_at
    key = (connection.person.pk, str(connection.organization.pk), client_id)
    last_call_at = last_calls.get((connection.person.pk, connection.organization.pk, client_id))
    last_used_at = max(last_token_at, last_call_at) if last_call_at else last_token_at
    return ConnectionRow(
        person_email=connection.person.email,
        organization=connection.organization,
        client_id=client_id,
        # A name a client chose, shown on a page: hidden characters made visible (operator_core/display_text.py).
        client_name=display_safe(client_name) or client_id,
        registration=registration,
        scopes=connection.scopes,
        authorized_at=connection.authorized_at,
        last_used_at=last_used_at,
        tool_calls=None if calls is None else calls.get((connection.person.pk, client_id), 0),
        last_call_at=last_call_at,
        # Nothing refreshes a headless connection or one a provider granted.
        last_refresh_at=last_token_at if isinstance(connection, OAuthConnection) and not granted_by_issuer else None,
        failure=newest_failure_since(failures, key=key, since=connection.authorized_at),
        granted_by_issuer=granted_by_issuer,
    )


def _rows(
    connections: list[Connection], failures: list[FailureRow], calls: dict[tuple[int | None, str], int] | None = None
) -> list[ConnectionRow]:
    keys = [(connection.person.pk, connection.organization.pk, _client_id(connection)) for connection in connections]
    last_calls = last_tool_calls(keys)
    rows = [_row(connection, last_calls, calls, failures) for connection in connections]
    return sorted(rows, key=lambda row: row.last_used_at, reverse=True)


def connections_of_person(person: User, *, failures: list[FailureRow] | None = None) -> list[ConnectionRow]:
    """The person's own live connections, into every organization, most recently used first.

    `failures` are the person's (`connections.health.failures_of_person`): each
    row shows the newest one of its connection.
    """
    found: list[Connection] = [*oauth_connections(person_id=person.pk), *headless_connections(person_id=person.pk)]
    return _rows(found, failures or [])


def connections_in_organization(
    organization: Organization, *, failures: list[FailureRow] | None = None
) -> list[ConnectionRow]:
    """Every live connection into the organization, with its tool calls of the last 30 days.

    The 30 days are whole days in the organization's display time zone, today
    included, as on the usage page. `failures` are the organization's
    (`connections.health.failures_in_organization`).
    """
    found: list[Connection] = [
        *oauth_connections(organization_id=organization.pk),
        *headless_connections(organization_id=organization.pk),
    ]
    now = timezone.now()
    zone = display_zone(organization)
    first_day = now.astimezone(zone).date() - timedelta(days=ACTIVITY_DAYS - 1)
    calls = connection_tool_calls(organization.pk, zone=zone, first_day=first_day, now=now)
    return _rows(found, failures or [], calls)


@dataclass(frozen=True)
class ClientChoice:
    application: Application
    registration: str
    listed: bool
    # No secret: any local app can present its ID (docs/managing-connections.md#what-the-policy-cannot-tell-apart).
    public: bool


def client_choices(organization: Organization, rows: list[ConnectionRow]) -> list[ClientChoice]:
    """The registered clients an admin may list by client ID: those registered by the operators,
    those connected to the organization now, and those already listed."""
    policy = client_policy_or_none(organization.pk)
    listed = set(policy.applications.values_list("pk", flat=True)) if policy else set()
    connected = {row.client_id for row in rows}
    offered = Q(registration_source=Application.RegistrationSource.MANUAL) | Q(client_id__in=connected)
    applications = Application.objects.filter(offered | Q(pk__in=listed)).order_by("name", "client_id")
    return [
        ClientChoice(
            application=application,
            registration=registration_label(application),
            listed=application.pk in listed,
            public=application.client_type == Application.CLIENT_PUBLIC,
        )
        for application in applications
    ]
