"""Providers' discovery documents and key sets, fetched bounded and kept in Django's cache.

The discovery document (OpenID Connect Discovery 1.0 §4) is checked once when
fetched: its `issuer` must be the configured one exactly (§4.3), and the three
endpoints we use must be https URLs (or loopback, as for the issuer). The key
set is kept until a token names a key it lacks: then it is fetched again, once,
which is how a provider's key rotation reaches us (OIDC Core §10.1.1).
"""

import hashlib
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from identity_providers.errors import ProviderSignInRefused, Refusal
from identity_providers.fetching import fetch_json_object
from identity_providers.validation import LOOPBACK_HOSTS

DISCOVERY_PATH = "/.well-known/openid-configuration"
DISCOVERY_CACHE_SECONDS = 3600
JWKS_CACHE_SECONDS = 3600
_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri")
# The members Authlib reads. Authlib passes its server metadata on to the `requests` session it
# opens, where members named `proxies`, `verify` or `hooks` would configure it: nothing else is kept.
_KEPT = (
    "issuer",
    *_ENDPOINTS,
    "id_token_signing_alg_values_supported",
    "token_endpoint_auth_methods_supported",
    "code_challenge_methods_supported",
)


def _cache_key(kind: str, url: str) -> str:
    return f"identity_providers:{kind}:{hashlib.sha256(url.encode('utf-8')).hexdigest()}"


def is_acceptable_url(url: object) -> bool:
    """An https URL, or http on a loopback host (development and tests)."""
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    if not parts.hostname:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS)


def provider_metadata(issuer: str) -> dict[str, Any]:
    """The issuer's discovery document, from the cache or fetched and checked."""
    key = _cache_key("discovery", issuer)
    metadata = cache.get(key)
    if isinstance(metadata, dict):
        return metadata
    document = fetch_json_object(issuer.rstrip("/") + DISCOVERY_PATH)
    if document.get("issuer") != issuer or not all(is_acceptable_url(document.get(name)) for name in _ENDPOINTS):
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED)
    metadata = {name: document[name] for name in _KEPT if name in document}
    cache.set(key, metadata, DISCOVERY_CACHE_SECONDS)
    return metadata


def provider_key_set(jwks_uri: str, *, refresh: bool = False) -> dict[str, Any]:
    """The provider's JWK set (RFC 7517 §5): cached, or fetched when absent or when `refresh`."""
    key = _cache_key("jwks", jwks_uri)
    if not refresh:
        key_set = cache.get(key)
        if isinstance(key_set, dict):
            return key_set
    key_set = fetch_json_object(jwks_uri)
    try:
        KeySet.import_key_set(key_set)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError, AttributeError):
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED) from None
    cache.set(key, key_set, JWKS_CACHE_SECONDS)
    return key_set
