"""Hostile client metadata in every member: a 400 with an RFC 7591 error, no client, nothing logged.

Each member of the registration body (docs/authentication.md, "Registration")
gets lone surrogates, NUL and other control characters, values of every other
type, and values nested 100,000 levels deep. A null member counts as absent and
is not sent here.
"""

import json
from collections.abc import Iterator
from typing import Any

from django.test import TestCase

from oauth.models import Application
from tests.hostile import (
    CONTROL_STRINGS,
    DEEP_PLACEHOLDER,
    LONE_SURROGATES,
    NON_STRINGS,
    assert_no_traceback_logged,
    json_with_deep_value,
)
from tests.support import without_oauth_rate_limits

REGISTER = "/api/auth/oauth2/register"
VALID = {"client_name": "Agent", "redirect_uris": ["https://agent.example/callback"]}
STRING_MEMBERS = [
    "client_name",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "jwks_uri",
    "scope",
    "software_id",
    "software_version",
    "token_endpoint_auth_method",
    "application_type",
]
ARRAY_MEMBERS = ["redirect_uris", "grant_types", "response_types", "contacts"]


def hostile_members() -> Iterator[tuple[str, Any]]:
    """(member, value) pairs, each of which must be refused."""
    for member in [*STRING_MEMBERS, *ARRAY_MEMBERS, "jwks"]:
        is_array = member in ARRAY_MEMBERS
        for text in [*LONE_SURROGATES, *CONTROL_STRINGS, DEEP_PLACEHOLDER]:
            yield member, [text] if is_array else text
            if member == "redirect_uris" and text != DEEP_PLACEHOLDER:
                yield member, [f"https://agent.example/cb{text}"]
        for value in NON_STRINGS:
            if value is None or (member == "jwks" and isinstance(value, dict)):
                continue
            if is_array and isinstance(value, list):
                yield member, [value]
            else:
                yield member, value
    # Member names are text too.
    for text in [*LONE_SURROGATES, *CONTROL_STRINGS]:
        yield text, "x"


@without_oauth_rate_limits()
class HostileRegistrationTests(TestCase):
    def test_every_member_refuses_hostile_values(self) -> None:
        with assert_no_traceback_logged(self):
            for member, value in hostile_members():
                body = json_with_deep_value({**VALID, member: value})
                with self.subTest(member=member, value=json.dumps(value)[:40]):
                    response = self.client.post(REGISTER, data=body, content_type="application/json")
                    self.assertEqual(response.status_code, 400, response.content[:300])
                    expected = {"invalid_client_metadata", "invalid_redirect_uri"}
                    if member != "redirect_uris":
                        expected = {"invalid_client_metadata"}
                    self.assertIn(response.json()["error"], expected)

        self.assertFalse(Application.objects.exists())

    def test_bodies_that_are_not_json_objects_are_refused(self) -> None:
        bodies = [b"\xff", b"NaN", b"[]", b'"x"', b"1e400", b"{", json.dumps(VALID).encode()[:-1]]
        bodies += [json_with_deep_value(DEEP_PLACEHOLDER, kind=kind).encode() for kind in ("array", "object")]

        with assert_no_traceback_logged(self):
            for body in bodies:
                with self.subTest(body=body[:40]):
                    response = self.client.post(REGISTER, data=body, content_type="application/json")
                    self.assertEqual(response.status_code, 400)
                    self.assertEqual(response.json()["error"], "invalid_client_metadata")

        self.assertFalse(Application.objects.exists())
