"""DOT's models, swapped from the first migration, with the bound organization.

An authorization binds one person to one organization (contract §5.4); the grant
carries the choice from the consent page, and every access and refresh token
minted from it, or rotated from those, carries the same organization.
"""

from django.db import models
from oauth2_provider.models import (
    AbstractAccessToken,
    AbstractApplication,
    AbstractGrant,
    AbstractIDToken,
    AbstractRefreshToken,
)

from organizations.models import Organization


class Application(AbstractApplication):
    class Meta(AbstractApplication.Meta):
        swappable = "OAUTH2_PROVIDER_APPLICATION_MODEL"


class Grant(AbstractGrant):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")

    class Meta(AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class AccessToken(AbstractAccessToken):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, null=True, related_name="+")

    class Meta(AbstractAccessToken.Meta):
        swappable = "OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL"


class RefreshToken(AbstractRefreshToken):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, null=True, related_name="+")

    class Meta(AbstractRefreshToken.Meta):
        swappable = "OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL"


class IDToken(AbstractIDToken):
    class Meta(AbstractIDToken.Meta):
        swappable = "OAUTH2_PROVIDER_ID_TOKEN_MODEL"
