"""Hostile values in every field of both headless endpoints: a documented 4xx, no claim, nothing logged.

docs/headless.md, "Request bodies" and "Errors": a malformed body is 400
`invalid_arguments` naming the field (`body` when the body is not JSON this
service reads: a lone surrogate, 100,000 levels of nesting); a well-formed
claim token that names no claim is 404 `invalid_claim`.
"""

import json
from collections.abc import Iterator
from typing import Any

from agent_auth.models import Claim, IdempotencyRecord
from tests.agent_auth.support import COMPLETE_URL, START_URL, HeadlessTestCase, fresh_address, post_json
from tests.hostile import (
    CONTROL_STRINGS,
    DEEP_PLACEHOLDER,
    LONE_SURROGATES,
    NON_STRINGS,
    assert_no_traceback_logged,
    json_with_deep_value,
)

VALID = {
    START_URL: {"email": "a@example.test"},
    COMPLETE_URL: {"claim_token": "some-claim-token", "code": "123456"},
}
FIELDS = {START_URL: ["email"], COMPLETE_URL: ["claim_token", "code", "organization_id"]}


def hostile_bodies() -> Iterator[tuple[str, str, Any]]:
    """(url, field, value) for every field of both endpoints."""
    for url, fields in FIELDS.items():
        for field in fields:
            for value in [*LONE_SURROGATES, *CONTROL_STRINGS, DEEP_PLACEHOLDER, *NON_STRINGS]:
                yield url, field, value


class HostileHeadlessBodyTests(HeadlessTestCase):
    def test_every_field_of_both_endpoints_refuses_hostile_values(self) -> None:
        with assert_no_traceback_logged(self):
            for url, field, value in hostile_bodies():
                body = json_with_deep_value({**VALID[url], field: value})
                with self.subTest(url=url, field=field, value=json.dumps(value)[:40]):
                    response = post_json(self.client, url, body, address=fresh_address())
                    self.assert_documented_refusal(response, field=field)

        self.assertFalse(Claim.objects.exists())
        self.assertEqual(self.mails(), [])

    def test_unknown_fields_are_read_by_the_same_parse_step(self) -> None:
        for extra in ("\ud800", DEEP_PLACEHOLDER):
            body = json_with_deep_value({**VALID[START_URL], "note": extra}, levels=100)
            with self.subTest(extra=extra[:20]):
                response = post_json(self.client, START_URL, body, address=fresh_address(), idempotency_key="k1")
                self.assertEqual(response.status_code, 400)
                self.assertEqual(response.json()["error"]["field"], "body")

        self.assertFalse(Claim.objects.exists())
        self.assertFalse(IdempotencyRecord.objects.exists())

    def test_hostile_idempotency_keys_are_refused(self) -> None:
        with assert_no_traceback_logged(self):
            for key in [*CONTROL_STRINGS, "ключ", "a b"]:
                with self.subTest(key=key):
                    response = post_json(
                        self.client, START_URL, VALID[START_URL], address=fresh_address(), idempotency_key=key
                    )
                    self.assertEqual(response.status_code, 400)
                    self.assertEqual(response.json()["error"]["field"], "Idempotency-Key")

        self.assertFalse(IdempotencyRecord.objects.exists())
        self.assertEqual(self.mails(), [])

    def assert_documented_refusal(self, response, *, field: str) -> None:
        error = response.json()["error"]
        if response.status_code == 404:
            self.assertEqual(error["code"], "invalid_claim")
            return
        self.assertEqual(response.status_code, 400, error)
        self.assertEqual(error["code"], "invalid_arguments")
        self.assertIn(error["field"], {field, "body"})
