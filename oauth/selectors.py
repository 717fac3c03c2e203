"""Reads for the authorization server: who may connect, and to which organizations.

Only organization admins and members may connect; the chooser lists only
organizations where the person holds one of those roles
(docs/authentication.md#3-consent-and-the-organization-chooser).
"""

import json

from django.conf import settings
from oauth2_provider.models import get_application_model
from oauth2_provider.utils import jwk_from_pem

from accounts.emails import people_with_email
from organizations.selectors import eligible_organizations, holds_operator_role

__all__ = ["eligible_organizations", "holds_operator_role", "lti_key_set"]


def lti_key_set() -> dict[str, list[dict[str, str]]]:
    """The public JWK set of the LTI integration, from the `OPERATOR_LTI_KEY` setting.

    A different key from the OAuth issuer's: a tool consumer's key set must never
    verify our access tokens, nor the other way round (docs/authentication.md#signing-keys-and-rotation).
    """
    key = jwk_from_pem(settings.OPERATOR_LTI_PRIVATE_KEY)
    public = json.loads(key.export_public())
    return {"keys": [{"alg": "RS256", "use": "sig", "kid": key.thumbprint(), **public}]}


def registered_redirect_uri_or_none(client_id: str, *, redirect_uri: str) -> str | None:
    """`redirect_uri` if the client `client_id` registered it (its only one when empty), else None."""
    application = get_application_model().objects.filter(client_id=client_id).first()
    if application is None:
        return None
    if not redirect_uri:
        registered = application.redirect_uris.split()
        return registered[0] if len(registered) == 1 else None
    return redirect_uri if application.redirect_uri_allowed(redirect_uri) else None


def person_id_for_email_or_none(email: str) -> int | None:
    """The id of the account signing in with `email` (any case), or None."""
    return people_with_email(email).values_list("pk", flat=True).first()
