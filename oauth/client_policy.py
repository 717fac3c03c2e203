"""Which clients may connect to an organization: the rule, its description and its one write.

The policy (`oauth.models.ClientPolicy`) is read at consent, at the code
exchange and at every refresh, the same way the role is re-read there, so a
tightened policy ends an existing connection at its next refresh
(docs/managing-connections.md#the-client-policy). It admits clients by what
the server can vouch for, never by name:

- a listed registered client, by its client ID;
- a Client ID Metadata Document client by the host that serves its document
  (the host answers for the document, so `claude.ai` cannot be claimed by others);
- dynamically registered clients only as one class: their names are self-asserted.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.db import transaction

from audit.models import AuditAction
from audit.services import record_event
from oauth.models import Application, ClientPolicy
from operator_core.errors import InvalidArguments
from organizations.models import Organization

# RFC 1123 host names: dot-separated labels of letters, digits and hyphens.
_HOST_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")
MAX_METADATA_HOSTS = 50


def metadata_host(client_id: str) -> str:
    """The host serving a Client ID Metadata Document client's document (its client ID is the document's URL)."""
    return (urlsplit(client_id).hostname or "").lower()


def client_policy_or_none(organization_id: uuid.UUID | str) -> ClientPolicy | None:
    return ClientPolicy.objects.filter(organization_id=organization_id).first()


def client_admitted(application: Application, *, organization_id: uuid.UUID | str) -> bool:
    """Whether the organization's policy lets `application` connect; True when the organization has no policy."""
    policy = client_policy_or_none(organization_id)
    if policy is None or not policy.only_listed:
        return True
    source = application.registration_source
    if source == Application.RegistrationSource.CIMD and metadata_host(application.client_id) in policy.metadata_hosts:
        return True
    if source == Application.RegistrationSource.DCR and policy.dynamic_clients:
        return True
    return policy.applications.filter(pk=application.pk).exists()


@dataclass(frozen=True)
class PolicySummary:
    """A policy as a person reads it: on the admins' page and on the page refusing a client."""

    only_listed: bool
    dynamic_clients: bool
    metadata_hosts: list[str]
    applications: list[Application]

    @property
    def sentence(self) -> str:
        if not self.only_listed:
            return "Any client may connect."
        allowed = [f"clients whose metadata document is served by {host}" for host in self.metadata_hosts]
        allowed += [f"{application.name or application.client_id}" for application in self.applications]
        if self.dynamic_clients:
            allowed.append("dynamically registered clients")
        if not allowed:
            return "Only listed clients may connect, and none is listed."
        return "Only these clients may connect: " + "; ".join(allowed) + "."


def policy_summary(organization_id: uuid.UUID | str) -> PolicySummary:
    policy = client_policy_or_none(organization_id)
    if policy is None:
        return PolicySummary(only_listed=False, dynamic_clients=False, metadata_hosts=[], applications=[])
    return PolicySummary(
        only_listed=policy.only_listed,
        dynamic_clients=policy.dynamic_clients,
        metadata_hosts=list(policy.metadata_hosts),
        applications=list(policy.applications.order_by("name", "client_id")),
    )


def normalise_metadata_hosts(values: Iterable[str]) -> list[str]:
    """Host names from what an admin typed (one per line; a pasted client ID URL gives its host).

    Raises `InvalidArguments` naming the first entry that is not a host name.
    """
    hosts: list[str] = []
    for value in values:
        entry = value.strip().lower()
        if not entry:
            continue
        host = metadata_host(entry) if "://" in entry else entry.rstrip(".")
        if not _HOST_NAME.fullmatch(host):
            raise InvalidArguments(f"{value.strip()[:100]!r} is not a host name, such as claude.ai.", field="hosts")
        if host not in hosts:
            hosts.append(host)
    if len(hosts) > MAX_METADATA_HOSTS:
        raise InvalidArguments(f"List at most {MAX_METADATA_HOSTS} hosts.", field="hosts")
    return hosts


@transaction.atomic
def set_client_policy(
    *,
    organization: Organization,
    actor: User,
    only_listed: bool,
    dynamic_clients: bool,
    metadata_hosts: list[str],
    applications: list[Application],
) -> ClientPolicy:
    """Store the organization's policy and write who changed it, and to what, to the audit trail.

    `metadata_hosts` are already normalised (`normalise_metadata_hosts`). Existing
    connections are not ended here: each one meets the new policy at its next refresh.
    """
    policy, _ = ClientPolicy.objects.select_for_update().get_or_create(organization=organization)
    policy.only_listed = only_listed
    policy.dynamic_clients = dynamic_clients
    policy.metadata_hosts = metadata_hosts
    policy.save()
    policy.applications.set(applications)
    record_event(
        AuditAction.CLIENT_POLICY_CHANGE,
        organization_id=organization.pk,
        actor_id=actor.pk,
        detail={
            "only_listed": only_listed,
            "dynamic_clients": dynamic_clients,
            "metadata_hosts": metadata_hosts,
            "client_ids": sorted(application.client_id for application in applications),
        },
    )
    return policy
