"""The development secrets: created under var/ by a command, never by importing settings.

`make run` calls `manage.py create_local_secrets`; in development `migrate`
does too, so a fresh checkout that only migrates can serve. Production never
creates a secret: it is given each one (docs/deploy.md).
"""

from django.conf import settings

from operator_core.signing_keys import load_or_create_fernet_key, load_or_create_private_key, load_or_create_secret_key


def create_missing_local_secrets() -> list[str]:
    """Create each secret that settings found neither in the environment nor on disk; return their names.

    The running process keeps the settings it started with; the next one reads the new files.
    """
    created = []
    for secret in settings.OPERATOR_SECRETS:
        if secret.origin not in ("missing", "missing file") or secret.path is None:
            continue
        if secret.name == "DJANGO_SECRET_KEY":
            load_or_create_secret_key(secret.path)
        elif secret.name == "OPERATOR_IDENTITY_PROVIDER_KEY":
            load_or_create_fernet_key(secret.path)
        else:
            load_or_create_private_key(secret.path)
        created.append(f"{secret.name} in {secret.path}")
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
    return created
