"""Providers' client secrets are sealed under OPERATOR_IDENTITY_PROVIDER_KEY, open under it or a
fallback, and a wrong or missing key is our own clear error (docs/single-sign-on.md#the-key)."""

import tempfile

from django.test import SimpleTestCase

from identity_providers.client_secrets import ClientSecretUnavailable, seal_client_secret, unseal_client_secret
from operator_core.signing_keys import generate_fernet_key
from tests.identity_providers.support import provider_key
from tests.operator_site.test_production_mode import _import_settings

SECRET = "the-provider's-client-secret-ü"
OLD_KEY = generate_fernet_key()
NEW_KEY = generate_fernet_key()


class ClientSecretSealTests(SimpleTestCase):
    @provider_key(NEW_KEY)
    def test_a_sealed_secret_unseals_to_itself_and_does_not_contain_it(self) -> None:
        sealed = seal_client_secret(SECRET)
        self.assertNotIn("client-secret", sealed)
        self.assertEqual(unseal_client_secret(sealed), SECRET)

    def test_a_secret_sealed_under_a_retired_key_unseals_through_the_fallbacks(self) -> None:
        with provider_key(OLD_KEY):
            sealed = seal_client_secret(SECRET)
        with provider_key(NEW_KEY, OLD_KEY):
            self.assertEqual(unseal_client_secret(sealed), SECRET)
            # Sealing uses the current key only: the retired one can then be dropped.
            resealed = seal_client_secret(SECRET)
        with provider_key(NEW_KEY):
            self.assertEqual(unseal_client_secret(resealed), SECRET)

    def test_a_wrong_key_is_our_error_naming_the_setting_not_the_secret(self) -> None:
        with provider_key(OLD_KEY):
            sealed = seal_client_secret(SECRET)
        with (
            provider_key(NEW_KEY),
            self.assertRaises(ClientSecretUnavailable) as raised,
        ):
            unseal_client_secret(sealed)
        self.assertIn("OPERATOR_IDENTITY_PROVIDER_KEY", raised.exception.message)
        self.assertNotIn(sealed, raised.exception.message)
        self.assertIsNone(raised.exception.__cause__)

    @provider_key(NEW_KEY)
    def test_an_altered_or_garbled_sealed_value_is_our_error(self) -> None:
        sealed = seal_client_secret(SECRET)
        for altered in (sealed[:-4] + "AAAA", "not a token", "ü"):
            with self.subTest(altered=altered), self.assertRaises(ClientSecretUnavailable):
                unseal_client_secret(altered)

    @provider_key("", OLD_KEY)
    def test_without_a_current_key_nothing_is_sealed_even_with_fallbacks(self) -> None:
        with self.assertRaisesMessage(ClientSecretUnavailable, "OPERATOR_IDENTITY_PROVIDER_KEY is not set"):
            seal_client_secret(SECRET)


class ClientSecretKeySettingTests(SimpleTestCase):
    def test_a_malformed_key_stops_start_up_naming_the_variable_not_the_value(self) -> None:
        for variable, value in (
            ("OPERATOR_IDENTITY_PROVIDER_KEY", "not-a-fernet-key"),
            ("OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS", f"{NEW_KEY},not-a-fernet-key"),
        ):
            with self.subTest(variable=variable):
                with tempfile.TemporaryDirectory() as var_dir:
                    result = _import_settings({variable: value, "OPERATOR_VAR_DIR": var_dir})
                self.assertNotEqual(result.returncode, 0)
                self.assertIn(f"{variable} must be a Fernet key", result.stderr)
                self.assertNotIn("not-a-fernet-key", result.stderr)
