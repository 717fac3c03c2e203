"""Identity providers' client secrets, sealed at rest under OPERATOR_IDENTITY_PROVIDER_KEY.

A sealed secret is a Fernet token (authenticated encryption: AES-128-CBC with
HMAC-SHA256). Sealing always uses the current key; unsealing also tries each
key of OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS, so a key can be rotated
without re-entering every secret at once (docs/single-sign-on.md#the-key).
Settings refuse a malformed key at start-up, and production refuses to start
without one (operator_site/settings/keys.py).
"""

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from operator_core.errors import OperatorError


class ClientSecretUnavailable(OperatorError):
    """No key to seal with, or a sealed secret that no configured key opens.

    A configuration fault of the service, never the person's: whoever catches it
    shows a page that says sign-in through the provider is unavailable.
    """


def seal_client_secret(secret: str) -> str:
    """The Fernet token of `secret` under the current key."""
    return _keys().encrypt(secret.encode()).decode("ascii")


def unseal_client_secret(sealed: str) -> str:
    """The secret in `sealed`, opened with the current key or a fallback."""
    try:
        return _keys().decrypt(sealed.encode("ascii")).decode()
    except (InvalidToken, UnicodeError):
        # Deliberately no detail: which key failed, or the token itself, helps no one reading a log.
        raise ClientSecretUnavailable(
            "A stored identity provider client secret cannot be unsealed with "
            "OPERATOR_IDENTITY_PROVIDER_KEY or its fallbacks; staff must enter the secret again "
            "or restore the key that sealed it."
        ) from None


def _keys() -> MultiFernet:
    current: str = settings.OPERATOR_IDENTITY_PROVIDER_KEY
    if not current:
        raise ClientSecretUnavailable(
            "OPERATOR_IDENTITY_PROVIDER_KEY is not set: run `manage.py create_local_secrets` "
            "in development, or give the key (docs/configuration.md)."
        )
    fallbacks: list[str] = settings.OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS
    return MultiFernet([Fernet(key) for key in (current, *fallbacks)])
