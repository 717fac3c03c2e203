"""Hostile values in every parameter of the token and revocation endpoints: an OAuth error, nothing logged.

The token endpoint answers 400 or 401 with an RFC 6749 §5.2 error (or RFC
8707's `invalid_target`); the revocation endpoint answers 200 for a token it
does not know (RFC 7009 §2.2) and 401 `invalid_client` for a client it does not
know. Form values are always text, so "another type" here is a repeated
parameter or a JSON body; a lone surrogate arrives as the UTF-8 bytes of one,
which are not UTF-8 (`%ED%A0%80`).
"""

import base64
from collections.abc import Iterator
from urllib.parse import quote

from django.test import override_settings

from oauth.models import AccessToken, RefreshToken
from organizations.models import Role
from tests.factories import make_membership
from tests.hostile import CONTROL_STRINGS, assert_no_traceback_logged, deeply_nested
from tests.oauth.support import REDIRECT_URI, REVOKE, TOKEN, OAuthTestCase, documented_errors
from tests.support import without_oauth_rate_limits

FORM = "application/x-www-form-urlencoded"
# The errors docs/authentication.md#errors promises for each endpoint: a hostile value must get one of them.
TOKEN_ERRORS = documented_errors("token")
REVOCATION_ERRORS = documented_errors("revoke")
# Percent-encoded: the bytes of a lone surrogate (not UTF-8), a 100,000-level JSON text, odd text.
HOSTILE_VALUES = [
    *(quote(text) for text in CONTROL_STRINGS),
    "%ED%A0%80",
    "%ED%B0%80x",
    "%FF%FE",
    quote(deeply_nested(kind="object")),
    "",
]


def form(fields: dict[str, str], *, field: str, raw: str) -> str:
    """The form with `field` set to the percent-encoded `raw`, the others encoded as usual."""
    pairs = [f"{quote(name)}={quote(value)}" for name, value in fields.items() if name != field]
    return "&".join([*pairs, f"{quote(field)}={raw}"])


# Client secrets are checked on almost every request here: a fast hasher keeps the sweep quick.
@override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
@without_oauth_rate_limits()
class HostileTokenEndpointTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.confidential = self.register(token_endpoint_auth_method="client_secret_post")
        self.sign_in(make_membership(role=Role.MEMBER).user)
        self.authorization = self.authorize(self.client_id)
        self.code_form = {
            "grant_type": "authorization_code",
            "code": self.authorization.code,
            "redirect_uri": REDIRECT_URI,
            "client_id": self.client_id,
            "code_verifier": self.authorization.verifier,
            "resource": self.operator_endpoint(),
        }
        self.refresh_form = {
            "grant_type": "refresh_token",
            "refresh_token": "not-a-refresh-token",
            "client_id": self.confidential["client_id"],
            "client_secret": self.confidential["client_secret"],
            "scope": "mcp:operator.read",
            "resource": self.operator_endpoint(),
        }

    def hostile_forms(self) -> Iterator[tuple[str, str]]:
        """(parameter, body): each parameter of both grants with each hostile value, then repeated."""
        for fields in (self.code_form, self.refresh_form):
            for field in fields:
                for raw in HOSTILE_VALUES:
                    yield field, form(fields, field=field, raw=raw)
                yield field, form(fields, field=field, raw=f"{quote(fields[field])}&{quote(field)}=other")

    def assert_oauth_error(self, response) -> None:
        # 413: the deeply nested value, URL-encoded, is a body over the service's 1 MiB.
        self.assertIn(response.status_code, {400, 401, 413}, response.content[:300])
        self.assertIn(response.json()["error"], TOKEN_ERRORS)

    def test_every_parameter_refuses_hostile_values(self) -> None:
        with assert_no_traceback_logged(self):
            for field, body in self.hostile_forms():
                with self.subTest(field=field, body=body[:120]):
                    self.assert_oauth_error(self.api.post(TOKEN, data=body, content_type=FORM))

        self.assertFalse(AccessToken.objects.exists())

    def test_hostile_client_credentials_in_basic_auth_are_invalid_client(self) -> None:
        with assert_no_traceback_logged(self):
            for raw in HOSTILE_VALUES:
                for credentials in (f"{raw}:secret", f"{self.confidential['client_id']}:{raw}"):
                    header = "Basic " + base64.b64encode(credentials.encode()).decode()
                    with self.subTest(credentials=credentials[:80]):
                        response = self.api.post(
                            TOKEN,
                            data=form(self.refresh_form, field="client_secret", raw=""),
                            content_type=FORM,
                            HTTP_AUTHORIZATION=header,
                        )
                        self.assert_oauth_error(response)

    def test_json_bodies_are_refused(self) -> None:
        bodies = ['{"grant_type": ["authorization_code"], "code": {"a": 1}}', deeply_nested(), "\udc80"]
        with assert_no_traceback_logged(self):
            for body in bodies:
                with self.subTest(body=body[:40]):
                    response = self.api.post(
                        TOKEN, data=body.encode("utf-8", "surrogateescape"), content_type="application/json"
                    )
                    self.assert_oauth_error(response)


class NulClientIdTests(OAuthTestCase):
    """PostgreSQL cannot even look such an id up; both databases answer that no such client exists."""

    def test_a_client_id_holding_nul_is_invalid_client_at_the_token_endpoint(self) -> None:
        response = self.api.post(TOKEN, {"grant_type": "refresh_token", "refresh_token": "x", "client_id": "a\x00b"})

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.json()["error"], "invalid_client")

    def test_a_client_id_holding_nul_is_invalid_client_at_the_revocation_endpoint(self) -> None:
        response = self.api.post(REVOKE, {"token": "x", "client_id": "\x00"})

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.json()["error"], "invalid_client")


class HostileRevocationTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)
        self.tokens = self.tokens_for(self.client_id)
        # Another token than the client's own: a hostile hint must not decide what is revoked.
        self.revoke_form = {
            "token": "not-a-token-of-this-client",
            "token_type_hint": "refresh_token",
            "client_id": self.client_id,
        }

    def test_every_parameter_refuses_hostile_values_and_revokes_nothing(self) -> None:
        with assert_no_traceback_logged(self):
            for field in self.revoke_form:
                for raw in HOSTILE_VALUES:
                    body = form(self.revoke_form, field=field, raw=raw)
                    with self.subTest(field=field, body=body[:120]):
                        response = self.api.post(REVOKE, data=body, content_type=FORM)
                        self.assert_revocation_answer(response, field=field)

        self.assertIsNone(RefreshToken.objects.get().revoked)

    def assert_revocation_answer(self, response, *, field: str) -> None:
        if response.status_code == 413:
            # The deeply nested value, URL-encoded, is a body over the service's 1 MiB: refused unread.
            self.assertEqual(response.json()["error"], "invalid_request")
            return
        if field == "client_id":
            self.assertEqual(response.status_code, 401, response.content[:300])
            self.assertEqual(response.json()["error"], "invalid_client")
            return
        # RFC 7009 §2.2: an unknown token, or a hint the server does not know, is not an error.
        if response.status_code == 200:
            return
        self.assertEqual(response.status_code, 400, response.content[:300])
        self.assertIn(response.json()["error"], REVOCATION_ERRORS)
