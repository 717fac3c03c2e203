"""DOT's models, swapped from the first migration, with the bound organization.

An authorization binds one person to one organization
(docs/authentication.md#3-consent-and-the-organization-chooser); the grant
carries the choice from the consent page, and every access and refresh token
minted from it, or rotated from those, carries the same organization.
"""

import hashlib
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from oauth2_provider.models import (
    AbstractAccessToken,
    AbstractApplication,
    AbstractGrant,
    AbstractIDToken,
    AbstractRefreshToken,
    ClientSecretField,
)

from oauth.client_secrets import client_secret_digest, is_client_secret_digest, is_password_hash
from oauth.redirect_uris import (
    APPLICATION_TYPE_NATIVE,
    APPLICATION_TYPE_WEB,
    RedirectUriRejected,
    check_redirect_uri,
    private_use_schemes,
)
from operator_core.display_text import display_safe
from organizations.models import Organization


def code_digest(code: str) -> str:
    """The SHA-256 under which an authorization code is stored and looked up."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


class DigestField(models.CharField):
    """Stores the SHA-256 of its value; exact lookups digest their operand the same way.

    So DOT's own `Grant.objects.get(code=code, ...)` finds the grant unchanged, while
    the database never holds a usable code. Nothing reads a grant's code back or
    saves a loaded grant again (which would digest a digest).
    """

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        return None if value is None else code_digest(value)


class ClientSecretDigestField(ClientSecretField):
    """Stores a client secret as its keyed digest (oauth/client_secrets.py), not as DOT's password hash.

    A value already stored (a digest, or a password hash from before digests)
    is kept as it is, so saving a loaded application never digests a digest.
    `hash_client_secret=False` keeps DOT's meaning: the secret is stored as given.
    """

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        secret = getattr(model_instance, self.attname)
        keep = (
            not getattr(model_instance, "hash_client_secret", True)
            or not secret
            or is_client_secret_digest(secret)
            or is_password_hash(secret)
        )
        if keep:
            return models.CharField.pre_save(self, model_instance, add)
        digest = client_secret_digest(secret)
        setattr(model_instance, self.attname, digest)
        return digest


class ApplicationType(models.TextChoices):
    WEB = APPLICATION_TYPE_WEB, "Web"
    NATIVE = APPLICATION_TYPE_NATIVE, "Native"


# RFC 7523 §2.1: the grant of enterprise-managed authorization (oauth/id_jag_grant.py).
JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class Application(AbstractApplication):
    GRANT_JWT_BEARER = JWT_BEARER_GRANT_TYPE
    # DOT's grants and one more: a client registered for the JWT bearer grant alone. DOT then
    # requires no redirect URI of it (Application.clean) and refuses it every redirect-based
    # flow (`allows_grant_type`), so it can never use /authorize (docs/authentication.md).
    authorization_grant_type = models.CharField(
        max_length=44,
        choices=[*AbstractApplication.GRANT_TYPES, (GRANT_JWT_BEARER, "JWT bearer (ID-JAG) only")],
        verbose_name="authorization grant type",
    )
    client_secret = ClientSecretDigestField(
        max_length=255,
        blank=True,
        default=AbstractApplication._meta.get_field("client_secret").default,
        db_index=True,
        help_text="Stored as a keyed digest on save: copy a new secret before saving.",
    )
    # The last code exchange or refresh; a registered client that never got this far is
    # deleted after OPERATOR["unused_client_retention_hours"] (oauth.services.purge_unused_clients).
    last_used_at = models.DateTimeField(null=True, blank=True)
    # OIDC Dynamic Client Registration `application_type`, stored and echoed. It does not
    # decide which redirect URIs are accepted: oauth/redirect_uris.py says why.
    application_type = models.CharField(max_length=8, choices=ApplicationType.choices, default=ApplicationType.WEB)
    # Every client may ask for `openid`, and its ID token is signed with the issuer's
    # RSA key: DOT's default (no algorithm) would fail at the token endpoint.
    algorithm = models.CharField(
        max_length=5,
        choices=AbstractApplication.ALGORITHM_TYPES,
        default=AbstractApplication.RS256_ALGORITHM,
        blank=True,
    )

    class Meta(AbstractApplication.Meta):
        swappable = "OAUTH2_PROVIDER_APPLICATION_MODEL"

    def __str__(self) -> str:
        # What the admin shows for a client (titles, lists, choices): its name as a person may read it.
        return display_safe(self.name) or self.client_id

    def get_allowed_schemes(self) -> list[str]:
        """http(s) plus the client's own private-use schemes, already checked by clean()."""
        return ["https", "http", *private_use_schemes(self.redirect_uris.split())]

    def clean(self) -> None:
        """DOT's checks, then our redirect-URI policy (oauth/redirect_uris.py) on every registration path."""
        super().clean()
        problems = []
        for uri in self.redirect_uris.split():
            try:
                check_redirect_uri(uri)
            except RedirectUriRejected as rejected:
                problems.append(str(rejected))
        if problems:
            raise ValidationError({"redirect_uris": problems})


class Grant(AbstractGrant):
    # Codes are stored as digests (docs/development/decisions.md#codes-and-pkce).
    code = DigestField(max_length=255, unique=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")

    class Meta(AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class AccessToken(AbstractAccessToken):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, null=True, related_name="+")
    # The enterprise's provider whose ID-JAG granted this token (oauth/id_jag_grant.py); null for every
    # other grant. The connections pages show such a connection as granted by that provider.
    granted_by = models.ForeignKey(
        "identity_providers.IdentityProvider", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta(AbstractAccessToken.Meta):
        swappable = "OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL"


class RefreshToken(AbstractRefreshToken):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, null=True, related_name="+")
    # When the person allowed the connection: carried from token to token across rotations,
    # so "first authorized" survives the purge of rotated tokens (docs/managing-connections.md).
    authorized_at = models.DateTimeField(null=True, blank=True)

    class Meta(AbstractRefreshToken.Meta):
        swappable = "OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL"


class RedeemedCode(models.Model):
    """An authorization code already exchanged, kept so a replay can revoke what it issued.

    RFC 6749 §4.1.2 / OAuth 2.1 §4.1.3: a code used twice is refused and the
    tokens issued from it are revoked. DOT deletes the grant on exchange, so
    the code's checksum (never the code itself) and the token family survive here
    until the family's refresh tokens could have expired.
    """

    code_checksum = models.CharField(max_length=64, unique=True)
    application = models.ForeignKey("oauth.Application", on_delete=models.CASCADE, related_name="+")
    token_family = models.UUIDField(null=True, blank=True)
    access_token_id = models.BigIntegerField(null=True, blank=True)
    expires = models.DateTimeField()
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"RedeemedCode #{self.pk}"


class RefreshRotation(models.Model):
    """One rotation of a refresh token, kept for the grace window so that a retry gets the same answer.

    docs/authentication.md#refresh-tokens says what a client sees; `oauth.refresh_grace`
    owns the rules. The answer (the successor refresh token and its access token) is
    sealed with AES-GCM under a key derived from the rotated token, which the database
    holds only as a digest: a copy of the database opens none of it. The row goes when
    its window ends (the next token request after `expires`, or `purge_expired`).
    """

    rotated = models.OneToOneField("oauth.RefreshToken", on_delete=models.CASCADE, related_name="+")
    successor = models.ForeignKey("oauth.RefreshToken", on_delete=models.CASCADE, related_name="+")
    salt = models.BinaryField()
    nonce = models.BinaryField()
    sealed_answer = models.BinaryField()
    created = models.DateTimeField()
    expires = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"RefreshRotation #{self.pk}"


class IDToken(AbstractIDToken):
    class Meta(AbstractIDToken.Meta):
        swappable = "OAUTH2_PROVIDER_ID_TOKEN_MODEL"


class ClientPolicy(models.Model):
    """Which clients may connect to one organization (docs/managing-connections.md#the-client-policy).

    No row, or `only_listed` off, admits any client. With `only_listed` on, a
    client is admitted when it is one of `applications`, a Client ID Metadata
    Document client whose document is served by one of `metadata_hosts`, or a
    dynamically registered client while `dynamic_clients` is on. A client's
    name never admits it: a dynamically registered client names itself.
    `oauth.client_policy` owns the rule and every write.
    """

    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, primary_key=True, related_name="client_policy"
    )
    only_listed = models.BooleanField(default=False)
    dynamic_clients = models.BooleanField("every dynamically registered client", default=False)
    metadata_hosts = models.JSONField("Client ID Metadata Document hosts", default=list, blank=True)
    applications = models.ManyToManyField("oauth.Application", blank=True, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "client policies"

    def __str__(self) -> str:
        return f"client policy of {self.organization_id}"
