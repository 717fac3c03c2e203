"""Org-bound JWT access tokens (RFC 9068): minting and local verification.

Both the OAuth token endpoint (through DOT's ACCESS_TOKEN_GENERATOR hook) and the
headless path mint here; the MCP endpoint verifies here with no network and no
database: keys are parsed once per process and looked up by `kid`.
"""

import functools
import time
import uuid
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey, RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from oauth2_provider.utils import jwk_from_pem

from operator_core.conf import operator_settings

TOKEN_TYPE = "at+jwt"
ALGORITHM = "RS256"
ORGANIZATION_CLAIM = "org_id"
_ACCEPTED_TYPES = {"at+jwt", "application/at+jwt"}
_REQUIRED_CLAIMS = ["iss", "sub", "aud", "exp", "iat", "jti", "scope", "client_id", ORGANIZATION_CLAIM]


class InvalidAccessToken(Exception):
    """The token is not one we issued for this resource, or it has expired."""


@dataclass(frozen=True)
class AccessTokenClaims:
    user_id: int
    organization_id: str
    client_id: str
    scopes: frozenset[str]
    jti: str
    expires_at: int


@dataclass(frozen=True)
class _KeySet:
    signing_kid: str
    signing_key: RSAPrivateKey
    public_keys: dict[str, RSAPublicKey]


@functools.cache
def _key_set() -> _KeySet:
    provider: dict[str, Any] = settings.OAUTH2_PROVIDER
    active_pem: str = provider["OIDC_RSA_PRIVATE_KEY"]
    inactive_pems: list[str] = provider.get("OIDC_RSA_PRIVATE_KEYS_INACTIVE", [])
    public_keys: dict[str, RSAPublicKey] = {}
    for pem in [active_pem, *inactive_pems]:
        public_keys[key_id(pem)] = _rsa_private_key(pem).public_key()
    return _KeySet(signing_kid=key_id(active_pem), signing_key=_rsa_private_key(active_pem), public_keys=public_keys)


def _rsa_private_key(pem: str) -> RSAPrivateKey:
    key = load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, RSAPrivateKey):
        # Tokens are RS256 (docs/operations.md#signing-key-and-key-rotation): any other key type cannot sign them.
        raise ImproperlyConfigured("The token signing keys must be RSA private keys.")
    return key


def load_signing_keys() -> None:
    """Parse the signing keys now (a worker calls it as it starts), not in the first request that needs them."""
    _key_set()


def _forget_keys_and_tokens(**_: object) -> None:
    # New keys, issuer or audience: every verification so far is void.
    _key_set.cache_clear()
    _verified_claims.cache_clear()


setting_changed.connect(_forget_keys_and_tokens, weak=False)


def key_id(pem: str) -> str:
    """The `kid` of a key: its RFC 7638 thumbprint, as DOT's JWKS view publishes it."""
    return jwk_from_pem(pem).thumbprint()


def issue_access_token(
    *,
    user_id: int,
    organization_id: str,
    client_id: str,
    scopes: list[str] | tuple[str, ...],
    expires_in: int,
    issued_at: int | None = None,
) -> str:
    """Sign an access token for the operator endpoint, bound to one person and organization.

    `issued_at` (Unix seconds) stands in for this server's clock, e.g. to act as a server that runs ahead.
    """
    conf = operator_settings()
    keys = _key_set()
    now = int(time.time()) if issued_at is None else issued_at
    claims: dict[str, Any] = {
        "iss": conf.issuer,
        "sub": str(user_id),
        "aud": conf.operator_endpoint_url,
        "iat": now,
        "nbf": now,
        "exp": now + expires_in,
        "jti": uuid.uuid4().hex,
        "client_id": client_id,
        "scope": " ".join(scopes),
        ORGANIZATION_CLAIM: str(organization_id),
    }
    return jwt.encode(
        claims, keys.signing_key, algorithm=ALGORITHM, headers={"typ": TOKEN_TYPE, "kid": keys.signing_kid}
    )


# Verified tokens this process has seen: a client sends the same token on every
# call, and checking an RS256 signature costs more than the rest of a tool call.
# Only a token that passed every check is kept; expiry is judged on every use.
VERIFIED_TOKENS_KEPT = 4096


def verify_access_token(token: str) -> AccessTokenClaims:
    """The claims of a token we issued for this resource that has not expired; else InvalidAccessToken.

    A token is verified fully once (`_verified_claims`); afterwards only its
    expiry is checked again, with the configured leeway.
    """
    claims = _verified_claims(token)
    if claims.expires_at + operator_settings().token_leeway_seconds < time.time():
        raise InvalidAccessToken("expired token")
    return claims


@functools.lru_cache(maxsize=VERIFIED_TOKENS_KEPT)
def _verified_claims(token: str) -> AccessTokenClaims:
    """Check signature, `typ`, `kid`, issuer, audience, expiry and shape; raise InvalidAccessToken.

    A `cnf` claim means a sender-constrained token, which we never issue nor accept
    (docs/authentication.md#access-token). Scope is returned, not judged: the endpoint answers 403 for it.
    """
    conf = operator_settings()
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise InvalidAccessToken("malformed token") from None
    if str(header.get("typ", "")).lower() not in _ACCEPTED_TYPES or header.get("alg") != ALGORITHM:
        raise InvalidAccessToken("not an access token")
    public_key = _key_set().public_keys.get(header.get("kid", ""))
    if public_key is None:
        raise InvalidAccessToken("unknown signing key")
    try:
        claims = jwt.decode(
            token,
            public_key,
            algorithms=[ALGORITHM],
            audience=conf.operator_endpoint_url,
            issuer=conf.issuer,
            options={"require": _REQUIRED_CLAIMS, "strict_aud": True},
            # exp, nbf and iat: app servers' clocks differ by a little (docs/deploy.md, "Scaling out").
            leeway=conf.token_leeway_seconds,
        )
    except jwt.PyJWTError:
        raise InvalidAccessToken("invalid token") from None
    if "cnf" in claims:
        raise InvalidAccessToken("sender-constrained tokens are not accepted")
    try:
        user_id = int(claims["sub"])
    except (TypeError, ValueError):
        raise InvalidAccessToken("invalid subject") from None
    return AccessTokenClaims(
        user_id=user_id,
        organization_id=str(claims[ORGANIZATION_CLAIM]),
        client_id=str(claims["client_id"]),
        scopes=frozenset(str(claims["scope"]).split()),
        jti=str(claims["jti"]),
        expires_at=int(claims["exp"]),
    )


def generate_access_token(request: Any, refresh_token: bool = False) -> str:
    """DOT's ACCESS_TOKEN_GENERATOR: mint the JWT for the token endpoint.

    The validator puts the bound organization on the oauthlib request
    (`request.organization_id`) in validate_code / validate_refresh_token,
    because DOT fills `request.resource` only after this runs
    (docs/development/decisions.md#jwt-access-tokens).
    """
    return issue_access_token(
        user_id=request.user.pk,
        organization_id=request.organization_id,
        client_id=request.client_id or request.client.client_id,
        scopes=request.scopes,
        expires_in=operator_settings().access_token_lifetime_seconds,
    )
