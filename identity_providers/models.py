"""Organizations' OpenID Connect providers, the email domains each serves, and people's links to them.

Fields and constraints only. Staff alone configure providers (the Django admin and
`manage.py identity_provider`); a provider proves who a person is, and memberships
still decide what they may read (docs/development/decisions.md#single-sign-on).
"""

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower


class IdentityProvider(models.Model):
    organization = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="identity_providers"
    )
    # Exactly as the provider's discovery document states it: ID tokens are checked against it.
    issuer = models.URLField(max_length=255)
    client_id = models.CharField("client ID", max_length=255)
    # Fernet token of the client secret under OPERATOR_IDENTITY_PROVIDER_KEY, never the secret
    # itself (identity_providers/client_secrets.py).
    client_secret_sealed = models.TextField(editable=False)
    # Password sign-in is refused for the provider's domains.
    required = models.BooleanField(default=False)
    # A person the provider signs in with no membership gets one as `requester`; else refused.
    create_requesters = models.BooleanField(default=False)
    # Enterprise-managed authorization: ID-JAGs this issuer signs are grants for this organization
    # (identity_providers/id_jag.py). Its key set is the one its discovery document names.
    enterprise_managed = models.BooleanField(default=False)
    # The client IDs an ID-JAG of this provider may name; empty: any client registered here.
    ema_client_ids = models.JSONField(default=list, blank=True)
    # An ID-JAG whose `sub` is not linked yet links it by its `email`, as a first sign-in does.
    link_by_email = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["organization__slug", "issuer"]
        constraints = [
            # One issuer (Google's, say) may serve many organizations, each with its own client.
            models.UniqueConstraint(fields=["organization", "issuer"], name="idp_one_per_org_issuer"),
        ]

    def __str__(self) -> str:
        return self.issuer


class ProviderDomain(models.Model):
    """An email domain a provider serves: lower-case, in its ASCII (IDNA) form."""

    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="domains")
    # A domain belongs to at most one provider, across every organization.
    domain = models.CharField(max_length=253, unique=True)

    class Meta:
        ordering = ["domain"]
        constraints = [
            models.CheckConstraint(condition=models.Q(domain=Lower("domain")), name="idp_domain_lower_case"),
        ]

    def __str__(self) -> str:
        return self.domain


class IdentityLink(models.Model):
    """A person as a provider knows them: `(issuer, subject)`, never the email alone (OIDC Core §5.7)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="identity_links")
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_signed_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="idp_link_one_per_subject"),
        ]

    def __str__(self) -> str:
        return f"{self.issuer} {self.subject}"
