"""Tokens from an app server whose clock differs by a little verify; by minutes, they do not."""

import time

from django.conf import settings
from django.test import SimpleTestCase, override_settings

from oauth.tokens import InvalidAccessToken, issue_access_token, verify_access_token
from operator_core.conf import operator_settings
from operator_core.signing_keys import generate_private_key_pem

ORGANIZATION_ID = "7f1f3c9e-3b1a-4b44-9f0e-2f1d1c0b0a01"
LIFETIME = 3600


def _minted_by_a_server_whose_clock_is_off_by(seconds: int) -> str:
    return issue_access_token(
        user_id=7,
        organization_id=ORGANIZATION_ID,
        client_id="client-1",
        scopes=["mcp:operator.read"],
        expires_in=LIFETIME,
        issued_at=int(time.time()) + seconds,
    )


def _expired_since(seconds: int) -> str:
    return _minted_by_a_server_whose_clock_is_off_by(-LIFETIME - seconds)


class ClockLeewayTests(SimpleTestCase):
    def test_default_leeway_is_thirty_seconds(self) -> None:
        self.assertEqual(operator_settings().token_leeway_seconds, 30)

    def test_token_from_a_server_twenty_seconds_ahead_is_accepted(self) -> None:
        claims = verify_access_token(_minted_by_a_server_whose_clock_is_off_by(20))
        self.assertEqual(claims.user_id, 7)

    def test_token_from_a_server_two_minutes_ahead_is_refused(self) -> None:
        with self.assertRaises(InvalidAccessToken):
            verify_access_token(_minted_by_a_server_whose_clock_is_off_by(120))

    def test_token_expired_twenty_seconds_ago_is_accepted(self) -> None:
        self.assertEqual(verify_access_token(_expired_since(20)).user_id, 7)

    def test_token_expired_two_minutes_ago_is_refused(self) -> None:
        with self.assertRaises(InvalidAccessToken):
            verify_access_token(_expired_since(120))

    def test_leeway_is_configurable(self) -> None:
        token = _minted_by_a_server_whose_clock_is_off_by(20)
        with (
            override_settings(OPERATOR={**settings.OPERATOR, "token_leeway_seconds": 5}),
            self.assertRaises(InvalidAccessToken),
        ):
            verify_access_token(token)


class VerifiedTokenCacheTests(SimpleTestCase):
    def test_a_verified_token_is_refused_once_its_signing_key_is_gone(self) -> None:
        token = _minted_by_a_server_whose_clock_is_off_by(0)
        verify_access_token(token)
        other_key = generate_private_key_pem()
        provider = {**settings.OAUTH2_PROVIDER, "OIDC_RSA_PRIVATE_KEY": other_key, "OIDC_RSA_PRIVATE_KEYS_INACTIVE": []}
        with override_settings(OAUTH2_PROVIDER=provider), self.assertRaises(InvalidAccessToken):
            verify_access_token(token)

    def test_a_verified_token_is_refused_once_the_audience_changes(self) -> None:
        token = _minted_by_a_server_whose_clock_is_off_by(0)
        verify_access_token(token)
        other_origin = {**settings.OPERATOR, "operator_endpoint_url": "https://other.example/api/mcp/operator"}
        with override_settings(OPERATOR=other_origin), self.assertRaises(InvalidAccessToken):
            verify_access_token(token)
