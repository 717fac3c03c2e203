"""Reads of identity providers for the admin and the command; the sign-in flow has its own."""

from django.db.models import QuerySet

from identity_providers.models import IdentityProvider, ProviderDomain


def providers_with_domains() -> QuerySet[IdentityProvider]:
    """Every provider with its organization and domains, in the model's order (slug, issuer)."""
    return IdentityProvider.objects.select_related("organization").prefetch_related("domains")


def provider_or_none(*, organization_slug: str, issuer: str) -> IdentityProvider | None:
    """The provider of the organization `organization_slug` whose issuer is exactly `issuer`."""
    return providers_with_domains().filter(organization__slug=organization_slug, issuer=issuer).first()


def domains_served_elsewhere(domains: list[str], *, provider_id: int | None) -> list[str]:
    """Those of `domains` that a provider other than `provider_id` already serves, in order."""
    taken = ProviderDomain.objects.filter(domain__in=domains)
    if provider_id is not None:
        taken = taken.exclude(provider_id=provider_id)
    return sorted(taken.values_list("domain", flat=True))
