"""The signing key is generated once and reused on every start."""

import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.test import SimpleTestCase

from operator_core.signing_keys import load_or_create_private_key


class SigningKeyTests(SimpleTestCase):
    def test_absent_key_is_generated_with_owner_only_permissions(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "keys" / "signing.pem"
            pem = load_or_create_private_key(path)
            key = load_pem_private_key(pem.encode(), password=None)
            self.assertEqual(key.key_size, 2048)
            self.assertEqual(path.stat().st_mode & 0o077, 0)

    def test_existing_key_is_reused(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "signing.pem"
            first = load_or_create_private_key(path)
            self.assertEqual(load_or_create_private_key(path), first)
            self.assertEqual(len(list(Path(directory).iterdir())), 1)
