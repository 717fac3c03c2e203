"""Access tokens are verified fully: signature, typ, kid, issuer, audience, expiry, shape."""

import time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.conf import settings
from django.test import SimpleTestCase, override_settings

from oauth import tokens
from oauth.tokens import InvalidAccessToken, issue_access_token, verify_access_token
from operator_core.conf import operator_settings

ORGANIZATION_ID = "7f1f3c9e-3b1a-4b44-9f0e-2f1d1c0b0a01"


def _mint(**overrides: object) -> str:
    arguments = {
        "user_id": 42,
        "organization_id": ORGANIZATION_ID,
        "client_id": "client-1",
        "scopes": ["mcp:operator.read"],
        "expires_in": 3600,
        **overrides,
    }
    return issue_access_token(**arguments)


def _claims(**changes: object) -> dict[str, object]:
    conf = operator_settings()
    now = int(time.time())
    return {
        "iss": conf.issuer,
        "sub": "42",
        "aud": conf.operator_endpoint_url,
        "iat": now,
        "exp": now + 600,
        "jti": "j1",
        "client_id": "client-1",
        "scope": "mcp:operator.read",
        tokens.ORGANIZATION_CLAIM: ORGANIZATION_ID,
        **changes,
    }


def _sign(claims: dict[str, object], *, key: object = None, headers: dict[str, str] | None = None) -> str:
    key_set = tokens._key_set()
    header = {"typ": "at+jwt", "kid": key_set.signing_kid, **(headers or {})}
    return jwt.encode(claims, key or key_set.signing_key, algorithm="RS256", headers=header)


class IssueAccessTokenTests(SimpleTestCase):
    def test_token_carries_the_rfc9068_header_and_claims(self) -> None:
        token = _mint()

        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
        self.assertEqual(header["typ"], "at+jwt")
        self.assertEqual(header["kid"], tokens.key_id(settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"]))
        self.assertEqual(claims["iss"], f"{operator_settings().base_url}/api/auth")
        self.assertEqual(claims["aud"], f"{operator_settings().base_url}/api/mcp/operator")
        self.assertEqual(claims["exp"] - claims["iat"], 3600)
        self.assertEqual(claims[tokens.ORGANIZATION_CLAIM], ORGANIZATION_ID)

    def test_valid_token_verifies_to_its_claims(self) -> None:
        claims = verify_access_token(_mint(scopes=["mcp:operator.read", "openid"]))

        self.assertEqual(claims.user_id, 42)
        self.assertEqual(claims.organization_id, ORGANIZATION_ID)
        self.assertEqual(claims.scopes, frozenset({"mcp:operator.read", "openid"}))


class VerifyAccessTokenRefusalTests(SimpleTestCase):
    def assertRefused(self, token: str) -> None:
        with self.assertRaises(InvalidAccessToken):
            verify_access_token(token)

    def test_expired_token_is_refused(self) -> None:
        self.assertRefused(_mint(expires_in=-120))

    def test_token_for_another_origin_is_refused(self) -> None:
        other = {**settings.OPERATOR, "base_url": "https://other.example", "issuer": "https://other.example/api/auth"}
        other["operator_endpoint_url"] = "https://other.example/api/mcp/operator"
        with override_settings(OPERATOR=other):
            token = _mint()
        self.assertRefused(token)

    def test_wrong_audience_alone_is_refused(self) -> None:
        self.assertRefused(_sign(_claims(aud="https://elsewhere.example/api/mcp/operator")))

    def test_wrong_issuer_alone_is_refused(self) -> None:
        self.assertRefused(_sign(_claims(iss="https://elsewhere.example/api/auth")))

    def test_id_token_typ_is_refused(self) -> None:
        self.assertRefused(_sign(_claims(), headers={"typ": "JWT"}))

    def test_unknown_kid_is_refused(self) -> None:
        self.assertRefused(_sign(_claims(), headers={"kid": "not-our-key"}))

    def test_signature_by_another_key_is_refused(self) -> None:
        stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.assertRefused(_sign(_claims(), key=stranger))

    def test_unsigned_token_is_refused(self) -> None:
        token = jwt.encode(_claims(), key=None, algorithm="none", headers={"typ": "at+jwt"})
        self.assertRefused(token)

    def test_sender_constrained_token_is_refused(self) -> None:
        self.assertRefused(_sign(_claims(cnf={"jkt": "thumbprint"})))

    def test_token_without_organization_is_refused(self) -> None:
        claims = _claims()
        del claims[tokens.ORGANIZATION_CLAIM]
        self.assertRefused(_sign(claims))

    def test_garbage_is_refused(self) -> None:
        self.assertRefused("not.a.jwt")


class KeyRotationTests(SimpleTestCase):
    def test_token_signed_by_a_retired_key_still_verifies(self) -> None:
        retired = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        retired_pem = retired.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        provider = settings.OAUTH2_PROVIDER
        with override_settings(OAUTH2_PROVIDER={**provider, "OIDC_RSA_PRIVATE_KEY": retired_pem}):
            token = _mint()
        with override_settings(OAUTH2_PROVIDER={**provider, "OIDC_RSA_PRIVATE_KEYS_INACTIVE": [retired_pem]}):
            self.assertEqual(verify_access_token(token).user_id, 42)
        with self.assertRaises(InvalidAccessToken):
            verify_access_token(token)  # once the retired key is dropped, its tokens die


class SigningKeysAtStartTests(SimpleTestCase):
    def test_the_wsgi_application_parses_the_signing_keys_before_any_request(self) -> None:
        import importlib

        import operator_site.wsgi

        tokens._key_set.cache_clear()
        importlib.reload(operator_site.wsgi)

        self.assertEqual(tokens._key_set.cache_info().currsize, 1)
