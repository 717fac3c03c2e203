"""Identity Assertion JWT Authorization Grants (ID-JAG): the checks before one becomes an access token.

An enterprise's provider signs an ID-JAG after its own policy allowed the person
to use the client with this service (draft-ietf-oauth-identity-assertion-authz-grant
§4.3, the MCP extension `io.modelcontextprotocol/enterprise-managed-authorization`);
the client presents it at our token endpoint as an RFC 7523 JWT bearer grant.
`verified_id_jag` checks, in this order, what the draft's §4.4.1 and the
extension's §5 require: the JOSE header (`typ`, an asymmetric `alg`), the issuer
(a provider staff trusted for enterprise-managed authorization), the signature
by that issuer's key set (fetched from its discovery document, cached, refetched
once on an unknown `kid`), `aud`, `client_id`, `resource`, `exp`/`iat`, and
last `jti`, recorded in the shared cache so no worker or server accepts it again.
The caller (oauth/id_jag_grant.py) then resolves the person and issues the token.
Every refusal is `IdJagRefused`: an OAuth error, a code for the audit trail and
a description that never quotes the assertion.
"""

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.cache import cache
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import extract_compact

from accounts.emails import email_domain
from identity_providers.accounts import person_for_identity
from identity_providers.discovery import provider_key_set, provider_metadata
from identity_providers.errors import ProviderSignInRefused, Refusal
from identity_providers.id_jag_errors import IdJagRefusal, IdJagRefused
from identity_providers.models import IdentityProvider
from identity_providers.sign_in import ID_TOKEN_ALGORITHMS
from operator_core.errors import TemporarilyUnavailable
from operator_core.outages import REDIS_OUTAGES

logger = logging.getLogger(__name__)

ID_JAG_TYPE = "oauth-id-jag+jwt"
# RFC 8725 §3.11 compares `typ` as a media type: case-insensitively, `application/` optional.
_ACCEPTED_TYPES = {ID_JAG_TYPE, f"application/{ID_JAG_TYPE}"}
# An ID-JAG is spent within seconds of its issue (draft §4.3 has it short-lived); one that lives
# longer would keep a person's access after the provider's policy revoked it.
MAX_LIFETIME_SECONDS = 600
MAX_ASSERTION_BYTES = 16 * 1024
MAX_JTI_LENGTH = 255
_JTI_KEY_PREFIX = "identity_providers:id_jag_jti"


@dataclass(frozen=True)
class VerifiedIdJag:
    """An ID-JAG that passed every check: the provider that signed it and what it grants."""

    provider: IdentityProvider
    subject: str
    email: str
    # None: the ID-JAG names no scope, and the request's scopes stand alone (extension §7.2.1).
    scopes: frozenset[str] | None


def verified_id_jag(
    assertion: str,
    *,
    audience: str,
    client_id: str,
    resource_url: str,
    names_resource: Callable[[str], bool],
    leeway_seconds: int,
    now: float | None = None,
) -> VerifiedIdJag:
    """The checked ID-JAG presented by the authenticated `client_id` to the authorization server `audience`.

    `resource_url` is the resource served here, which `names_resource` recognises in its forms.
    """
    now = time.time() if now is None else now
    header = _header(assertion)
    claims = _unverified_claims(assertion)
    provider = _trusted_provider(claims)
    _verify_signature(assertion, provider, header)
    _check_claims(
        claims,
        provider=provider,
        audience=audience,
        client_id=client_id,
        resource_url=resource_url,
        names_resource=names_resource,
    )
    _check_times(claims, now=now, leeway_seconds=leeway_seconds, provider=provider)
    _spend_jti(claims, provider=provider, now=now, leeway_seconds=leeway_seconds)
    scope = claims.get("scope")
    email = claims.get("email")
    # An email the provider says it has not verified links nothing and is compared with nothing.
    usable_email = isinstance(email, str) and "@" in email and claims.get("email_verified") is not False
    return VerifiedIdJag(
        provider=provider,
        subject=claims["sub"],
        email=email.strip() if usable_email else "",  # type: ignore[union-attr]
        scopes=frozenset(scope.split()) if isinstance(scope, str) else None,
    )


_REFUSALS = {
    Refusal.EMAIL_CHANGED: IdJagRefusal.EMAIL_CHANGED,
    Refusal.ACCOUNT_INACTIVE: IdJagRefusal.ACCOUNT_INACTIVE,
}


def person_for_id_jag(grant: VerifiedIdJag) -> User:
    """The account the ID-JAG's `sub` is linked to, by single sign-on's rules (identity_providers/accounts.py).

    An unlinked `sub` is linked by its email only when the provider links by email and the
    email is in one of its domains; no account is ever created (a new one could hold no role).
    """
    provider = grant.provider
    in_domains = bool(grant.email) and provider.domains.filter(domain=email_domain(grant.email)).exists()
    try:
        return person_for_identity(
            provider,
            subject=grant.subject,
            email=grant.email,
            link_by_email=provider.link_by_email and in_domains,
            may_create=False,
        )
    except ProviderSignInRefused as refusal:
        reason = _REFUSALS.get(refusal.reason, IdJagRefusal.UNLINKED_SUBJECT)
        raise IdJagRefused(reason, provider=provider, person_id=refusal.person_id) from None


def _header(assertion: str) -> dict[str, Any]:
    if len(assertion) > MAX_ASSERTION_BYTES or assertion.count(".") != 2:
        raise IdJagRefused(IdJagRefusal.MALFORMED)
    try:
        header = dict(extract_compact(assertion.encode("ascii")).protected)
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise IdJagRefused(IdJagRefusal.MALFORMED) from None
    if str(header.get("typ", "")).lower() not in _ACCEPTED_TYPES:
        raise IdJagRefused(IdJagRefusal.WRONG_TYPE)
    if header.get("alg") not in ID_TOKEN_ALGORITHMS:
        raise IdJagRefused(IdJagRefusal.WRONG_ALGORITHM)
    return header


def _unverified_claims(assertion: str) -> dict[str, Any]:
    """The payload, read only to find the issuer whose key then verifies it."""
    try:
        claims = json.loads(extract_compact(assertion.encode("ascii")).payload)
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise IdJagRefused(IdJagRefusal.MALFORMED) from None
    if not isinstance(claims, dict):
        raise IdJagRefused(IdJagRefusal.MALFORMED)
    for name in ("iss", "sub", "jti", "client_id"):
        if not isinstance(claims.get(name), str) or not claims[name]:
            raise IdJagRefused(IdJagRefusal.MISSING_CLAIM, detail=name)
    return claims


def _trusted_provider(claims: dict[str, Any]) -> IdentityProvider:
    """The provider record trusting `iss`; of several (one issuer serving many organizations), the email's."""
    trusted = list(
        IdentityProvider.objects.select_related("organization").filter(issuer=claims["iss"], enterprise_managed=True)
    )
    if not trusted:
        raise IdJagRefused(IdJagRefusal.UNTRUSTED_ISSUER)
    if len(trusted) == 1:
        return trusted[0]
    email = claims.get("email")
    domain = email_domain(email) if isinstance(email, str) and "@" in email else ""
    for provider in trusted:
        if provider.domains.filter(domain=domain).exists():
            return provider
    raise IdJagRefused(IdJagRefusal.AMBIGUOUS_ISSUER)


def _verify_signature(assertion: str, provider: IdentityProvider, header: dict[str, Any]) -> None:
    """Signed by a key of the issuer's published set; an unknown `kid` refetches the set once (rotation)."""
    try:
        jwks_uri = str(provider_metadata(provider.issuer)["jwks_uri"])
        key_set = KeySet.import_key_set(provider_key_set(jwks_uri))  # type: ignore[arg-type]
        if not _holds_key(key_set, header.get("kid")):
            key_set = KeySet.import_key_set(provider_key_set(jwks_uri, refresh=True))  # type: ignore[arg-type]
    except ProviderSignInRefused as refusal:
        # The operator's to fix or to wait out: the issuer is named, the assertion never.
        logger.warning(
            "enterprise-managed authorization: key set of %s unavailable (%s)", provider.issuer, refusal.reason
        )
        raise IdJagRefused(IdJagRefusal.KEYS_UNAVAILABLE, provider=provider) from None
    try:
        jwt.decode(assertion, key_set, algorithms=list(ID_TOKEN_ALGORITHMS))
    except (JoseError, ValueError, TypeError, KeyError):
        raise IdJagRefused(IdJagRefusal.INVALID_SIGNATURE, provider=provider) from None


def _holds_key(key_set: KeySet, kid: object) -> bool:
    if kid is None:
        return len(key_set.keys) == 1
    return any(key.kid == kid for key in key_set.keys)


def _check_claims(
    claims: dict[str, Any],
    *,
    provider: IdentityProvider,
    audience: str,
    client_id: str,
    resource_url: str,
    names_resource: Callable[[str], bool],
) -> None:
    aud = claims.get("aud")
    # One audience (RFC 7523 §3 allows a list; one of a single value is the same).
    if isinstance(aud, list) and len(aud) == 1:
        aud = aud[0]
    if aud != audience:
        raise IdJagRefused(IdJagRefusal.WRONG_AUDIENCE, detail=audience, provider=provider)
    if claims["client_id"] != client_id:
        raise IdJagRefused(IdJagRefusal.WRONG_CLIENT, provider=provider)
    resource = claims.get("resource")
    if resource is not None:
        resources = resource if isinstance(resource, list) else [resource]
        if not resources or not all(isinstance(value, str) and names_resource(value) for value in resources):
            raise IdJagRefused(IdJagRefusal.WRONG_RESOURCE, detail=resource_url, provider=provider)
    scope = claims.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise IdJagRefused(IdJagRefusal.MALFORMED, provider=provider)


def _check_times(claims: dict[str, Any], *, now: float, leeway_seconds: int, provider: IdentityProvider) -> None:
    if not _is_time(claims.get("exp")) or not _is_time(claims.get("iat")):
        raise IdJagRefused(IdJagRefusal.MISSING_CLAIM, detail="exp and iat", provider=provider)
    exp, iat = float(claims["exp"]), float(claims["iat"])
    if exp + leeway_seconds <= now:
        raise IdJagRefused(IdJagRefusal.EXPIRED, provider=provider)
    if iat - leeway_seconds > now:
        raise IdJagRefused(IdJagRefusal.ISSUED_IN_FUTURE, provider=provider)
    if exp - iat > MAX_LIFETIME_SECONDS:
        raise IdJagRefused(IdJagRefusal.LIFETIME_TOO_LONG, detail=str(MAX_LIFETIME_SECONDS), provider=provider)
    nbf = claims.get("nbf")
    if nbf is not None and (not _is_time(nbf) or nbf - leeway_seconds > now):
        raise IdJagRefused(IdJagRefusal.NOT_YET_VALID, provider=provider)


def _is_time(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _spend_jti(claims: dict[str, Any], *, provider: IdentityProvider, now: float, leeway_seconds: int) -> None:
    """Record the `jti` in the shared cache (Redis in production) for as long as the ID-JAG could pass.

    `add` is atomic in Redis (SET NX), so of two servers given one ID-JAG at once
    exactly one wins. When Redis does not answer, no ID-JAG is accepted: one
    that cannot be recorded could be replayed (`TemporarilyUnavailable`, 503).
    """
    jti = claims["jti"]
    if len(jti) > MAX_JTI_LENGTH:
        raise IdJagRefused(IdJagRefusal.MALFORMED, provider=provider)
    digest = hashlib.sha256(f"{provider.issuer} {jti}".encode()).hexdigest()
    seconds = max(1, int(claims["exp"] + leeway_seconds - now) + 1)
    try:
        added = cache.add(f"{_JTI_KEY_PREFIX}:{digest}", 1, timeout=seconds)
    except REDIS_OUTAGES as failure:
        logger.warning("enterprise-managed authorization: replay cache unavailable (%s)", type(failure).__name__)
        raise TemporarilyUnavailable() from None
    if not added:
        raise IdJagRefused(IdJagRefusal.REPLAYED, provider=provider)
