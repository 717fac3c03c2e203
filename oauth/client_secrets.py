"""Client secrets stored as keyed digests (docs/development/decisions.md#client-secrets).

DOT stores a client secret as a password hash (PBKDF2): checking one costs about
half a second of CPU, so a few requests a second with a wrong secret saturate
the server. A client secret is not a password: DOT generates 128 random
characters, beyond any guessing, so a deliberately slow hash adds nothing. We
store `hmac-sha256$<hex>`: HMAC-SHA256 of the secret under a key derived from
`SECRET_KEY` (Django's `salted_hmac`), compared in constant time. Checking a
wrong secret costs microseconds (bench/client_secret.py), and a copy of the
database alone still yields no secret and no offline test of a guess.

Pure functions: the field that stores digests is `oauth.models.ClientSecretDigestField`;
`oauth.services.verify_client_secret` checks a presented secret and moves a
secret stored under an older scheme (DOT's password hash, or an earlier
`SECRET_KEY` listed in `SECRET_KEY_FALLBACKS`) to the current digest.
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
