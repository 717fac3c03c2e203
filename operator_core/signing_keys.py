"""Create the service's secrets: RSA signing keys, Django's secret key and the Fernet key
that seals identity providers' client secrets.

Only management commands call this (`create_local_secrets` for development,
`generate_signing_key` for a deployment); settings merely read what exists.
A new file is written to a temporary name with owner-only permissions and
hard-linked into place, which fails if the name exists: several processes
creating the same file together agree on one complete secret.
"""

import contextlib
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

RSA_KEY_BITS = 2048


def generate_private_key_pem() -> str:
    """A new 2048-bit RSA private key as PKCS#8 PEM text."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    ).decode("ascii")


def generate_secret_key() -> str:
    """A new random value for Django's SECRET_KEY (about 400 bits)."""
    return secrets.token_urlsafe(50)


def generate_fernet_key() -> str:
    """A new Fernet key: 32 random bytes in URL-safe base64."""
    return Fernet.generate_key().decode("ascii")


def load_or_create_fernet_key(path: Path) -> str:
    """Return the Fernet key at `path`, generating one there first if needed."""
    _create_once(path, generate_fernet_key)
    return path.read_text().strip()


def load_or_create_private_key(path: Path) -> str:
    """Return the PEM text at `path`, generating an RSA key there first if needed."""
    _create_once(path, generate_private_key_pem)
    return path.read_text()


def load_or_create_secret_key(path: Path) -> str:
    """Return the secret key at `path`, generating one there first if needed."""
    _create_once(path, generate_secret_key)
    return path.read_text().strip()


def _create_once(path: Path, generate: Callable[[], str]) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mode 0600
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(generate())
        # If another process won the race, its secret is the one.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
