"""Writes of identity providers: add, change, remove, each atomic and audited.

The admin and `manage.py identity_provider` both write through these. Each
validates what staff gave (identity_providers/validation.py), seals the client
secret (identity_providers/client_secrets.py) and writes one `PROVIDER_CHANGE`
event naming the fields that changed, never the secret's value
(docs/single-sign-on.md#what-is-audited). Only staff reach them: an
organization's own admins never configure a provider, since one that served a
domain not theirs would sign them in as anyone of it.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from audit.models import AuditAction
from audit.services import record_event
from identity_providers.client_secrets import ClientSecretUnavailable, seal_client_secret, unseal_client_secret
from identity_providers.models import IdentityProvider, ProviderDomain
from identity_providers.selectors import domains_served_elsewhere
from identity_providers.validation import valid_domain, valid_issuer
from operator_core.errors import Conflict, InvalidArguments
from organizations.models import Organization

# Where a change came from, in each event's detail; the command line has no actor.
VIA_ADMIN = "admin"
VIA_COMMAND = "command"
MAX_CLIENT_ID_LENGTH = 255  # IdentityProvider.client_id
MAX_CLIENT_SECRET_LENGTH = 1024  # far above any provider's; the sealed form grows by a third
MAX_EMA_CLIENTS = 100


@dataclass(frozen=True)
class ProviderSettings:
    """What staff set on a provider besides its organization and issuer, which never change."""

    client_id: str
    domains: tuple[str, ...]
    required: bool = False
    create_requesters: bool = False
    # Enterprise-managed authorization (docs/authentication.md#enterprise-managed-authorization).
    enterprise_managed: bool = False
    ema_client_ids: tuple[str, ...] = ()
    link_by_email: bool = False


# The fields of ProviderSettings stored as they are, compared and audited by name.
_PLAIN_FIELDS = ("client_id", "required", "create_requesters", "enterprise_managed", "link_by_email")


def valid_settings(
    *,
    client_id: str,
    domains: Iterable[str],
    required: bool,
    create_requesters: bool,
    enterprise_managed: bool = False,
    ema_client_ids: Iterable[str] = (),
    link_by_email: bool = False,
) -> ProviderSettings:
    """The settings in their stored form: domains normalised, each once, in order."""
    client_id = client_id.strip()
    if not client_id or len(client_id) > MAX_CLIENT_ID_LENGTH:
        raise InvalidArguments(f"Give the client ID (at most {MAX_CLIENT_ID_LENGTH} characters).", field="client_id")
    normalised = tuple(sorted({valid_domain(domain) for domain in domains}))
    if not normalised:
        raise InvalidArguments("Give at least one email domain the provider serves.", field="domain")
    clients = valid_ema_client_ids(ema_client_ids)
    if (clients or link_by_email) and not enterprise_managed:
        raise InvalidArguments(
            "The enterprise-managed clients and linking by email apply only to a provider trusted for "
            "enterprise-managed authorization: set that too, or leave them out.",
            field="enterprise_managed",
        )
    return ProviderSettings(
        client_id,
        normalised,
        required=required,
        create_requesters=create_requesters,
        enterprise_managed=enterprise_managed,
        ema_client_ids=clients,
        link_by_email=link_by_email,
    )


def valid_ema_client_ids(values: Iterable[str]) -> tuple[str, ...]:
    """Client IDs an ID-JAG may name, each once, sorted: no blanks inside, at most 255 characters each."""
    clients: set[str] = set()
    for value in values:
        client_id = value.strip()
        if not client_id:
            continue
        if len(client_id) > MAX_CLIENT_ID_LENGTH or any(character.isspace() for character in client_id):
            raise InvalidArguments(
                f"{client_id[:60]!r} is not a client ID: one word of at most {MAX_CLIENT_ID_LENGTH} characters.",
                field="ema_client_ids",
            )
        clients.add(client_id)
    if len(clients) > MAX_EMA_CLIENTS:
        raise InvalidArguments(f"List at most {MAX_EMA_CLIENTS} clients.", field="ema_client_ids")
    return tuple(sorted(clients))


def valid_client_secret(secret: str) -> str:
    """`secret` if it can be a client secret: one line, not empty, bounded."""
    if not secret or len(secret) > MAX_CLIENT_SECRET_LENGTH or "\n" in secret or "\r" in secret:
        raise InvalidArguments(
            f"The client secret must be one line of 1 to {MAX_CLIENT_SECRET_LENGTH} characters.",
            field="client_secret",
        )
    return secret


@transaction.atomic
def add_provider(
    *,
    organization: Organization,
    issuer: str,
    client_secret: str,
    settings: ProviderSettings,
    changed_by: User | None,
    via: str,
) -> IdentityProvider:
    """A new provider of `organization`; Conflict if it has this issuer already or a domain is taken."""
    issuer = valid_issuer(issuer)
    sealed = seal_client_secret(valid_client_secret(client_secret))
    if IdentityProvider.objects.filter(organization=organization, issuer=issuer).exists():
        raise Conflict("This organization already has a provider with this issuer.", field="issuer")
    _require_free(settings.domains, provider_id=None)
    try:
        with transaction.atomic():
            provider = IdentityProvider.objects.create(
                organization=organization,
                issuer=issuer,
                client_id=settings.client_id,
                client_secret_sealed=sealed,
                required=settings.required,
                create_requesters=settings.create_requesters,
                enterprise_managed=settings.enterprise_managed,
                ema_client_ids=list(settings.ema_client_ids),
                link_by_email=settings.link_by_email,
            )
            ProviderDomain.objects.bulk_create(ProviderDomain(provider=provider, domain=d) for d in settings.domains)
    except IntegrityError:
        # Another writer took the issuer or a domain between the checks and the INSERTs.
        raise Conflict("The issuer or a domain was just taken by another provider; try again.") from None
    fields = ["issuer", "client_secret", "domains", *_PLAIN_FIELDS, "ema_client_ids"]
    _record(provider, change="added", fields=fields, changed_by=changed_by, via=via)
    return provider


@transaction.atomic
def change_provider(
    *,
    provider: IdentityProvider,
    client_secret: str | None,
    settings: ProviderSettings,
    changed_by: User | None,
    via: str,
) -> list[str]:
    """Apply `settings` (and a new secret unless None) to the provider; return the fields that changed.

    Nothing changed: nothing is written, not even an event.
    """
    locked = IdentityProvider.objects.select_for_update().get(pk=provider.pk)
    current = set(locked.domains.values_list("domain", flat=True))
    changed = [name for name in _PLAIN_FIELDS if getattr(locked, name) != getattr(settings, name)]
    if tuple(locked.ema_client_ids) != settings.ema_client_ids:
        changed.append("ema_client_ids")
    if client_secret is not None and _secret_differs(locked, valid_client_secret(client_secret)):
        changed.append("client_secret")
        locked.client_secret_sealed = seal_client_secret(client_secret)
    if current != set(settings.domains):
        changed.append("domains")
    if not changed:
        return []
    _require_free(settings.domains, provider_id=locked.pk)
    for name in _PLAIN_FIELDS:
        setattr(locked, name, getattr(settings, name))
    locked.ema_client_ids = list(settings.ema_client_ids)
    try:
        with transaction.atomic():
            locked.save()
            locked.domains.exclude(domain__in=settings.domains).delete()
            ProviderDomain.objects.bulk_create(
                ProviderDomain(provider=locked, domain=d) for d in settings.domains if d not in current
            )
    except IntegrityError:
        raise Conflict("A domain was just taken by another provider; try again.", field="domain") from None
    _record(locked, change="changed", fields=changed, changed_by=changed_by, via=via)
    return changed


@transaction.atomic
def remove_provider(*, provider: IdentityProvider, changed_by: User | None, via: str) -> None:
    """Delete the provider and its domains. People's links stay: they name the issuer, not the row."""
    domains = sorted(provider.domains.values_list("domain", flat=True))
    deleted, _ = IdentityProvider.objects.filter(pk=provider.pk).delete()
    if deleted:
        _record(provider, change="removed", fields=[], changed_by=changed_by, via=via, domains=domains)


def _require_free(domains: Iterable[str], *, provider_id: int | None) -> None:
    taken = domains_served_elsewhere(list(domains), provider_id=provider_id)
    if taken:
        raise Conflict(
            f"Already served by another provider: {', '.join(taken)}. A domain belongs to one provider only.",
            field="domain",
        )


def _secret_differs(provider: IdentityProvider, secret: str) -> bool:
    try:
        return unseal_client_secret(provider.client_secret_sealed) != secret
    except ClientSecretUnavailable:
        # Sealed under a key that is gone: the new one replaces it.
        return True


def _record(
    provider: IdentityProvider,
    *,
    change: str,
    fields: list[str],
    changed_by: User | None,
    via: str,
    domains: list[str] | None = None,
) -> None:
    if domains is None:
        domains = sorted(provider.domains.values_list("domain", flat=True))
    record_event(
        AuditAction.PROVIDER_CHANGE,
        organization_id=provider.organization_id,
        actor_id=changed_by.pk if changed_by is not None else None,
        # Names and non-secret values only: the secret appears as the field name `client_secret`.
        detail={"change": change, "via": via, "issuer": provider.issuer, "fields": fields, "domains": domains},
    )
