"""Malformed requests get a 400 naming the field at fault, never a 500, and change nothing."""

import json
import random

from agent_auth.models import Claim, IdempotencyRecord
from tests.agent_auth.support import COMPLETE_URL, START_URL, HeadlessTestCase, post_json
from tests.hostile import hostile_object, hostile_value

VALID_COMPLETION = {"claim_token": "some-claim-token", "code": "123456"}


class MalformedRequestTests(HeadlessTestCase):
    def assert_refused(self, response, field: str) -> None:
        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], "invalid_arguments")
        self.assertEqual(response.json()["error"]["field"], field)
        self.assertFalse(Claim.objects.exists())
        self.assertFalse(IdempotencyRecord.objects.exists())
        self.assertEqual(self.mails(), [])

    def post(self, url: str, body: object, **headers: str):
        return post_json(self.client, url, body, address=self.address, **headers)

    def test_missing_email(self) -> None:
        self.assert_refused(self.post(START_URL, {}), "email")

    def test_email_that_is_not_an_address(self) -> None:
        self.assert_refused(self.post(START_URL, {"email": "not an email"}), "email")

    def test_email_that_is_not_a_string(self) -> None:
        self.assert_refused(self.post(START_URL, {"email": ["a@example.test"]}), "email")

    def test_body_that_is_not_json(self) -> None:
        response = self.client.post(START_URL, "email=a@example.test", content_type="text/plain")

        self.assert_refused(response, "body")

    def test_body_that_is_a_json_array(self) -> None:
        self.assert_refused(self.post(START_URL, ["a@example.test"]), "body")

    def test_deeply_nested_body(self) -> None:
        self.assert_refused(self.post(START_URL, "[" * 5000 + "]" * 5000), "body")

    def test_body_that_is_too_large(self) -> None:
        self.assert_refused(self.post(START_URL, {"email": "a@example.test", "padding": "x" * 20000}), "body")

    def test_missing_claim_token(self) -> None:
        self.assert_refused(self.post(COMPLETE_URL, {"code": "123456"}), "claim_token")

    def test_code_that_is_not_six_digits(self) -> None:
        self.assert_refused(self.post(COMPLETE_URL, {**VALID_COMPLETION, "code": "12345"}), "code")

    def test_organization_id_that_is_not_a_uuid(self) -> None:
        self.assert_refused(self.post(COMPLETE_URL, {**VALID_COMPLETION, "organization_id": "acme"}), "organization_id")

    def test_idempotency_key_that_is_too_long(self) -> None:
        response = self.post(START_URL, {"email": "a@example.test"}, **{"Idempotency-Key": "k" * 256})

        self.assert_refused(response, "Idempotency-Key")

    def test_get_is_not_allowed(self) -> None:
        response = self.client.get(START_URL)

        self.assertEqual(response.status_code, 405)


class HostileBodyTests(HeadlessTestCase):
    """Bodies of every odd shape get a documented 4xx answer and create nothing."""

    def test_hostile_bodies_are_refused_with_documented_errors(self) -> None:
        rng = random.Random(20261121)
        keys = ["email", "claim_token", "code", "organization_id", "unknown"]
        answers: set[tuple[int, str]] = set()

        for number in range(150):
            body = hostile_object(rng, keys=keys) if number % 10 else hostile_value(rng)
            for url in (START_URL, COMPLETE_URL):
                response = post_json(self.client, url, json.dumps(body), address=f"10.9.{number}.1")
                answers.add((response.status_code, response.json()["error"]["code"]))

        self.assertLessEqual({status for status, _code in answers}, {400, 404})
        self.assertLessEqual({code for _status, code in answers}, {"invalid_arguments", "invalid_claim"})
        self.assertFalse(Claim.objects.exists())
