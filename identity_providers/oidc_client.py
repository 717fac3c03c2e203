"""Authlib's Django OpenID Connect client, built per provider from our cached discovery document.

Authlib does the protocol: `state` kept in the session and spent once, `nonce`,
PKCE S256, the code exchange, and the ID token's signature, `iss`, `aud`, `azp`,
`exp`, `iat` and `nonce` (OIDC Core §3.1.3.7), with a refetch of the key set on
an unknown `kid`. We give it the provider's configuration, our cache and our
bounds (identity_providers/fetching.py); why Authlib: docs/dependencies.md.
"""

from typing import Any

import requests
from authlib.integrations.django_client import DjangoIntegration, DjangoOAuth2App

from identity_providers.client_secrets import ClientSecretUnavailable, unseal_client_secret
from identity_providers.discovery import provider_key_set, provider_metadata
from identity_providers.errors import ProviderSignInRefused, Refusal
from identity_providers.fetching import read_bounded, timeouts
from identity_providers.models import IdentityProvider

SCOPE = "openid email profile"
# One name for every provider's state in the session: the callback reads which provider a
# state belongs to before it knows which client to build.
STATE_NAMESPACE = "identity_provider"


def _bound_responses(session: requests.Session) -> None:
    """Authlib's `compliance_fix` hook, run on every session it opens: bound each answer's size."""
    session.hooks["response"].append(read_bounded)


class ProviderClient(DjangoOAuth2App):
    """Authlib's Django client whose key set comes from our cache, refetched once on an unknown `kid`."""

    def fetch_jwk_set(self, force: bool = False) -> dict[str, Any]:
        return provider_key_set(self.server_metadata["jwks_uri"], refresh=force)


def state_store() -> DjangoIntegration:
    """Authlib's session store of pending sign-ins, shared by every provider's client."""
    return DjangoIntegration(STATE_NAMESPACE)


def client_for(provider: IdentityProvider) -> ProviderClient:
    try:
        secret = unseal_client_secret(provider.client_secret_sealed)
    except ClientSecretUnavailable:
        raise ProviderSignInRefused(Refusal.SECRET_UNAVAILABLE) from None
    client = ProviderClient(
        state_store(),
        name=STATE_NAMESPACE,
        client_id=provider.client_id,
        client_secret=secret,
        client_kwargs={"scope": SCOPE, "code_challenge_method": "S256", "default_timeout": timeouts()},
        compliance_fix=_bound_responses,
    )
    # The discovery document as Authlib's server metadata: Authlib fetches none of its own.
    client.server_metadata = dict(provider_metadata(provider.issuer))
    return client
