"""Load RSA signing keys from disk, creating each once when absent.

Imported by settings, so it must not import Django. A new key is written to a
temporary file and hard-linked into place, which fails if the name exists: several
gunicorn workers starting together therefore agree on one complete key.
"""

import contextlib
import os
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def load_or_create_private_key(path: Path) -> str:
    """Return the PEM text at `path`, generating a 2048-bit RSA key there first if needed."""
    if path.exists():
        return path.read_text()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".key-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
        # If another process won the race, its key is the one.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    return path.read_text()
