"""Client secrets stored as keyed digests (docs/development/decisions.md#client-secrets).

A secret is stored as `hmac-sha256$<hex>`, HMAC-SHA256 under a key derived from
`SECRET_KEY`, and compared in constant time: no password hash, which would let
a few wrong secrets a second saturate the server. Pure functions: the field
that stores digests is `oauth.models.ClientSecretDigestField`;
`oauth.services.verify_client_secret` checks a presented secret and moves one
stored under an older scheme (DOT's password hash, or a key in
`SECRET_KEY_FALLBACKS`) to the current digest.
"""

from __future__ import annotations

from django.contrib.auth.hashers import identify_hasher
from django.utils.crypto import constant_time_compare, salted_hmac

DIGEST_PREFIX = "hmac-sha256$"
_KEY_SALT = "oauth.client_secret"


def client_secret_digest(secret: str, *, key: str | bytes | None = None) -> str:
    """The stored form of `secret`, keyed with `key` (by default the current `SECRET_KEY`)."""
    return DIGEST_PREFIX + salted_hmac(_KEY_SALT, secret, secret=key, algorithm="sha256").hexdigest()


def is_client_secret_digest(stored: str) -> bool:
    return stored.startswith(DIGEST_PREFIX)


def is_password_hash(stored: str) -> bool:
    """True for a secret DOT stored with a Django password hasher (the scheme before digests)."""
    try:
        identify_hasher(stored)
    except ValueError:
        return False
    return True


def digest_matches(presented: str, stored: str, *, key: str | bytes | None = None) -> bool:
    """Constant-time check of `presented` against a stored digest made with `key`."""
    return constant_time_compare(client_secret_digest(presented, key=key), stored)
