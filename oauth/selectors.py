"""Reads for the authorization server: who may connect, and to which organizations.

Only organization admins and members may connect; the chooser lists only
organizations where the person holds one of those roles
(docs/authentication.md#3-consent-and-the-organization-chooser).
"""

import json

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from oauth2_provider.utils import jwk_from_pem

from operator_core.errors import Forbidden
from organizations.models import Organization
from organizations.selectors import eligible_organizations, holds_operator_role

__all__ = ["eligible_organizations", "holds_operator_role", "lti_key_set", "require_eligible_organization"]


def require_eligible_organization(user: AbstractBaseUser, *, organization_id: str | None) -> Organization:
    """The organization the person chose on the consent page, checked server-side.

    With no choice and exactly one eligible organization, that one is used (the
    page shows no chooser then). Raises Forbidden when the choice is not one of
    the person's eligible organizations (a forged or stale id) or when a choice
    is needed and missing.
    """
    organizations = list(eligible_organizations(user))
    if not organizations:
        raise Forbidden("You are not an admin or member of any organization.")
    if not organization_id:
        if len(organizations) == 1:
            return organizations[0]
        raise Forbidden("Choose an organization to connect.")
    for organization in organizations:
        if str(organization.pk) == str(organization_id):
            return organization
    raise Forbidden("That organization is not available to you.")


def lti_key_set() -> dict[str, list[dict[str, str]]]:
    """The public JWK set of the LTI integration, from the `OPERATOR_LTI_KEY` setting.

    A different key from the OAuth issuer's: a tool consumer's key set must never
    verify our access tokens, nor the other way round (docs/authentication.md#signing-keys-and-rotation).
    """
    key = jwk_from_pem(settings.OPERATOR_LTI_PRIVATE_KEY)
    public = json.loads(key.export_public())
    return {"keys": [{"alg": "RS256", "use": "sig", "kid": key.thumbprint(), **public}]}
