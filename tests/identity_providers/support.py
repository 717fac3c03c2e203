"""A key to seal client secrets under, for the tests of identity providers."""

from django.test import override_settings

from operator_core.signing_keys import generate_fernet_key

PROVIDER_KEY = generate_fernet_key()


def provider_key(current: str = PROVIDER_KEY, *fallbacks: str) -> override_settings:
    """Settings that seal under `current` and also unseal under `fallbacks`."""
    return override_settings(
        OPERATOR_IDENTITY_PROVIDER_KEY=current, OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS=[*fallbacks]
    )
