"""Single sign-on through an organization's provider: the redirect out, and the callback's checks.

Authlib runs the protocol (identity_providers/oidc_client.py); here are our rules
on top: the email's domain chooses the provider, the ID token's `email` must be
verified and in one of the provider's domains, and the account is the one the
`(issuer, subject)` link names (identity_providers/accounts.py). Every outcome
is audited as `provider_sign_in`: "ok" or the refusal's code, never a token.
"""

import re
import time
from dataclasses import dataclass
from typing import Any

import requests
from authlib.integrations.base_client import MismatchingStateError, OAuthError
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.urls import reverse
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError

from accounts.emails import email_domain
from audit.models import AuditAction
from audit.services import record_event
from identity_providers.accounts import person_for_identity
from identity_providers.errors import ProviderSignInRefused, Refusal
from identity_providers.fetching import ResponseTooLarge
from identity_providers.models import IdentityProvider, ProviderDomain
from identity_providers.oidc_client import client_for, state_store
from operator_core.conf import operator_settings

# Only public-key signatures: the key set is the provider's, and `none` or an HMAC would not prove it signed.
ID_TOKEN_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
# How long a person may take at the provider (a password, a second factor) before the
# pending sign-in is spent: Authlib's own store keeps it as long as the session.
PENDING_SECONDS = 15 * 60
# What of a provider's error code or a claim's name reaches a page and the audit trail.
_SAFE_WORD = re.compile(r"[a-z_,]{1,40}")


@dataclass(frozen=True)
class ProviderSignIn:
    person: User
    next_url: str


def provider_for_email(email: str) -> IdentityProvider | None:
    """The provider serving the domain of `email`, or None: then the person signs in with a password."""
    if "@" not in email:
        return None
    return IdentityProvider.objects.select_related("organization").filter(domains__domain=email_domain(email)).first()


def callback_url() -> str:
    return operator_settings().base_url.rstrip("/") + reverse("oauth:provider-callback")


def authorization_url(request: HttpRequest, provider: IdentityProvider, *, email: str, next_url: str) -> str:
    """Where to send the person: the provider's authorization endpoint, the pending sign-in saved in the session."""
    try:
        client = client_for(provider)
        redirect_uri = callback_url()
        pending = client.create_authorization_url(redirect_uri, login_hint=email)
    except ProviderSignInRefused as refusal:
        _record(provider, outcome=refusal.reason)
        raise
    # Authlib keeps state, nonce and the PKCE verifier in the session under `state`; the provider
    # and `next` ride along, so the callback knows both before it trusts anything in the query.
    client.save_authorize_data(
        request,
        redirect_uri=redirect_uri,
        provider=provider.pk,
        next=next_url,
        email=email,
        started_at=time.time(),
        **pending,
    )
    return str(pending["url"])


def complete_sign_in(request: HttpRequest) -> ProviderSignIn:
    """Check the provider's answer on the callback; the person to sign in, or `ProviderSignInRefused`."""
    store = state_store()
    state = request.GET.get("state", "")
    pending = store.get_state_data(request.session, state) if state else None
    provider = None
    if isinstance(pending, dict) and isinstance(pending.get("provider"), int):
        provider = IdentityProvider.objects.select_related("organization").filter(pk=pending["provider"]).first()
    if isinstance(pending, dict) and time.time() - float(pending.get("started_at") or 0) > PENDING_SECONDS:
        store.clear_state_data(request.session, state)
        provider = None
    if provider is None or not isinstance(pending, dict):
        _record(None, outcome=Refusal.INVALID_STATE)
        raise ProviderSignInRefused(Refusal.INVALID_STATE)
    try:
        person = _verified_person(request, provider)
    except ProviderSignInRefused as refusal:
        # Spent whatever failed: Authlib spends it only once it reaches the code exchange.
        store.clear_state_data(request.session, state)
        _record(provider, outcome=refusal.reason, person_id=refusal.person_id)
        refusal.typed_email = str(pending.get("email") or "")
        raise
    _record(provider, outcome="ok", person_id=person.pk)
    return ProviderSignIn(person=person, next_url=str(pending.get("next") or ""))


def _verified_person(request: HttpRequest, provider: IdentityProvider) -> User:
    error = request.GET.get("error")
    if error:
        # The provider said no (OIDC Core §3.1.2.6).
        detail = error if _SAFE_WORD.fullmatch(error) else ""
        raise ProviderSignInRefused(Refusal.PROVIDER_ERROR, detail=detail)
    claims = _id_token_claims(request, provider)
    email = claims.get("email")
    if not _email_is_verified(claims) or not isinstance(email, str) or "@" not in email:
        raise ProviderSignInRefused(Refusal.EMAIL_UNVERIFIED)
    if not ProviderDomain.objects.filter(provider=provider, domain=email_domain(email)).exists():
        raise ProviderSignInRefused(Refusal.EMAIL_OUTSIDE_DOMAINS)
    return person_for_identity(provider, subject=str(claims["sub"]), email=email.strip())


def _id_token_claims(request: HttpRequest, provider: IdentityProvider) -> dict[str, Any]:
    """Authlib's code exchange and ID token validation, its failures mapped to our refusals."""
    client = client_for(provider)
    metadata = client.server_metadata
    offered = metadata.get("id_token_signing_alg_values_supported")
    if not isinstance(offered, list) or not offered:
        offered = ["RS256"]  # the default of OpenID Connect Discovery 1.0 §3
    metadata["id_token_signing_alg_values_supported"] = [name for name in offered if name in ID_TOKEN_ALGORITHMS]
    claims_options = {
        "iss": {"essential": True, "value": metadata["issuer"]},
        "aud": {"essential": True, "value": provider.client_id},
        "sub": {"essential": True},
    }
    try:
        token = client.authorize_access_token(
            request, claims_options=claims_options, leeway=operator_settings().token_leeway_seconds
        )
    except MismatchingStateError:
        raise ProviderSignInRefused(Refusal.INVALID_STATE) from None
    except OAuthError:
        # The token endpoint's error answer (RFC 6749 §5.2): a spent or forged code.
        raise ProviderSignInRefused(Refusal.CODE_REFUSED) from None
    except ResponseTooLarge:
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED) from None
    except requests.RequestException:
        raise ProviderSignInRefused(Refusal.PROVIDER_UNAVAILABLE) from None
    except ExpiredTokenError:
        raise ProviderSignInRefused(Refusal.EXPIRED_ID_TOKEN) from None
    except ClaimError as error:
        detail = error.claim if _SAFE_WORD.fullmatch(error.claim) else ""
        raise ProviderSignInRefused(Refusal.INVALID_ID_TOKEN, detail=detail) from None
    except JoseError:
        raise ProviderSignInRefused(Refusal.INVALID_SIGNATURE) from None
    except (ValueError, TypeError, KeyError):
        # A token answer or ID token that is not the JSON it must be.
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED) from None
    claims = token.get("userinfo")
    if not isinstance(claims, dict):
        raise ProviderSignInRefused(Refusal.NO_ID_TOKEN)
    return dict(claims)


def _record(provider: IdentityProvider | None, *, outcome: str, person_id: int | None = None) -> None:
    record_event(
        AuditAction.PROVIDER_SIGN_IN,
        outcome=str(outcome),
        person_id=person_id,
        organization_id=provider.organization_id if provider else None,
        detail={"issuer": provider.issuer} if provider else {},
    )


def _email_is_verified(claims: dict[str, Any]) -> bool:
    """`email_verified` is true; or, absent, Microsoft Entra ID's `xms_edov` is.

    Entra's ID tokens carry no `email_verified`; its optional claim `xms_edov` says the
    tenant verified it owns the email's domain (docs/single-sign-on.md#microsoft-entra-id).
    An explicit `email_verified: false` is never overridden.
    """
    if "email_verified" in claims:
        return claims["email_verified"] is True
    return claims.get("xms_edov") is True
