"""Secrets: Django's secret key, the RSA keys that sign access tokens and the LTI key set, and
the key that seals identity providers' client secrets.

Each is given in the environment as its value (`DJANGO_SECRET_KEY`,
`OPERATOR_SIGNING_KEY`, `OPERATOR_LTI_KEY`, `OPERATOR_IDENTITY_PROVIDER_KEY`)
or as a file path (`..._FILE`, `..._PATH`). Without either, development reads the files that `manage.py
create_local_secrets` (run by `make run`) writes under var/. Importing settings
never writes a file, so every app server of a deployment uses the keys it is
given and they accept each other's tokens (docs/deploy.md).
"""

import binascii
from pathlib import Path

from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from operator_site.settings import env
from operator_site.settings.origin import VAR_DIR

SECRET = env.env_secret(
    "DJANGO_SECRET_KEY", path_name="DJANGO_SECRET_KEY_FILE", development_path=VAR_DIR / "secret-key"
)
SIGNING_KEY = env.env_secret(
    "OPERATOR_SIGNING_KEY", path_name="OPERATOR_SIGNING_KEY_PATH", development_path=VAR_DIR / "oauth-signing-key.pem"
)
LTI_KEY = env.env_secret(
    "OPERATOR_LTI_KEY", path_name="OPERATOR_LTI_KEY_PATH", development_path=VAR_DIR / "lti-signing-key.pem"
)
IDENTITY_PROVIDER_KEY = env.env_secret(
    "OPERATOR_IDENTITY_PROVIDER_KEY",
    path_name="OPERATOR_IDENTITY_PROVIDER_KEY_FILE",
    development_path=VAR_DIR / "identity-provider-key",
)
# Each has its check id in operator_site/settings/production.py (operator.E001 to E003, E005).
OPERATOR_SECRETS = [SECRET, SIGNING_KEY, LTI_KEY, IDENTITY_PROVIDER_KEY]

SECRET_KEY = SECRET.value
OPERATOR_SIGNING_KEY = SIGNING_KEY.value
OPERATOR_LTI_PRIVATE_KEY = LTI_KEY.value


def _fernet_key(name: str, key: str) -> str:
    """`key` if it is a Fernet key; a malformed one stops start-up rather than the first sign-in."""
    try:
        Fernet(key)
    except (ValueError, binascii.Error):
        # The value itself is never echoed: it is a secret, and start-up lines go to logs.
        raise ImproperlyConfigured(
            f"{name} must be a Fernet key: 32 random bytes in URL-safe base64 (docs/configuration.md)"
        ) from None
    return key


# Seals identity providers' client secrets (identity_providers/client_secrets.py); empty until
# created or given. The fallbacks are retired keys that still unseal what they sealed.
OPERATOR_IDENTITY_PROVIDER_KEY = (
    _fernet_key(IDENTITY_PROVIDER_KEY.name, IDENTITY_PROVIDER_KEY.value) if IDENTITY_PROVIDER_KEY.value else ""
)
OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS = [
    _fernet_key("OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS", key)
    for key in env.env_list("OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS", [])
]

# Retired signing keys: tokens they signed still verify until they expire (docs/deploy.md, "Key rotation").
OPERATOR_INACTIVE_SIGNING_KEYS = []
for _retired_path in env.env_list("OPERATOR_INACTIVE_SIGNING_KEY_PATHS", []):
    # A retired key must exist: generating one would verify nothing and hide a typo.
    if not Path(_retired_path).is_file():
        raise ImproperlyConfigured(f"OPERATOR_INACTIVE_SIGNING_KEY_PATHS names a missing file: {_retired_path}")
    OPERATOR_INACTIVE_SIGNING_KEYS.append(Path(_retired_path).read_text())
