"""Idempotency-Key on both headless endpoints, kept 24 hours in the database (docs/headless.md#idempotency-key)."""

from datetime import timedelta

from django.utils import timezone

from agent_auth.idempotency import IN_FLIGHT_TIMEOUT_SECONDS, body_fingerprint
from agent_auth.models import Claim, IdempotencyRecord, IdempotencyState
from tests.agent_auth.support import HeadlessTestCase, wrong_code
from tests.factories import make_idempotency_record, make_membership


class IdempotentStartTests(HeadlessTestCase):
    def test_same_key_and_body_replays_the_first_answer_without_a_second_email(self) -> None:
        user = make_membership().user
        first = self.start(user.email, idempotency_key="key-1")

        replay = self.start(user.email, idempotency_key="key-1")

        self.assertEqual(replay.status_code, 202)
        self.assertEqual(replay.json(), first.json())
        self.assertEqual(replay["Idempotent-Replayed"], "true")
        self.assertEqual(len(self.mails()), 1)
        self.assertEqual(Claim.objects.count(), 1)

    def test_same_key_with_another_body_answers_idempotency_key_reused(self) -> None:
        user = make_membership().user
        self.start(user.email, idempotency_key="key-1")

        response = self.start(make_membership().user.email, idempotency_key="key-1")

        self.assertEqual(response.status_code, 422)
        self.assertEqual(response.json()["error"]["code"], "idempotency_key_reused")
        self.assertEqual(len(self.mails()), 1)
        self.assertEqual(Claim.objects.count(), 1)

    def test_same_key_while_the_first_request_runs_answers_request_in_progress(self) -> None:
        user = make_membership().user
        now = timezone.now()
        make_idempotency_record(
            key="key-1",
            fingerprint=body_fingerprint({"email": user.email}),
            state=IdempotencyState.IN_FLIGHT,
            created_at=now,
        )

        response = self.start(user.email, idempotency_key="key-1")

        self.assertEqual(response.status_code, 409)
        self.assertEqual(response.json()["error"]["code"], "request_in_progress")
        self.assertEqual(self.mails(), [])
        self.assertFalse(Claim.objects.exists())

    def test_first_request_abandoned_for_over_a_minute_is_taken_over(self) -> None:
        user = make_membership().user
        started = timezone.now() - timedelta(seconds=IN_FLIGHT_TIMEOUT_SECONDS + 1)
        make_idempotency_record(
            key="key-1",
            fingerprint=body_fingerprint({"email": user.email}),
            state=IdempotencyState.IN_FLIGHT,
            created_at=started,
        )

        response = self.start(user.email, idempotency_key="key-1")

        self.assertEqual(response.status_code, 202)
        self.assertEqual(len(self.mails()), 1)
        self.assertEqual(IdempotencyRecord.objects.get().state, IdempotencyState.DONE)

    def test_answer_sealed_under_a_previous_secret_key_is_forgotten(self) -> None:
        user = make_membership().user
        with self.settings(SECRET_KEY="a-previous-secret-key-used-only-in-this-test"):
            first = self.start(user.email, idempotency_key="key-1")

        response = self.start(user.email, idempotency_key="key-1")

        self.assertEqual(response.status_code, 202)
        self.assertNotEqual(response.json()["claim_token"], first.json()["claim_token"])
        self.assertEqual(IdempotencyRecord.objects.count(), 1)

    def test_key_older_than_24_hours_is_forgotten(self) -> None:
        user = make_membership().user
        long_ago = timezone.now() - timedelta(hours=25)
        make_idempotency_record(
            key="key-1",
            fingerprint=body_fingerprint({"email": "someone-else@example.test"}),
            state=IdempotencyState.DONE,
            response_status=202,
            created_at=long_ago,
        )

        response = self.start(user.email, idempotency_key="key-1")

        self.assertEqual(response.status_code, 202)
        self.assertNotIn("Idempotent-Replayed", response)
        self.assertEqual(len(self.mails()), 1)
        record = IdempotencyRecord.objects.get()
        self.assertEqual(record.fingerprint, body_fingerprint({"email": user.email}))

    def test_stored_answer_holds_no_claim_token_in_clear(self) -> None:
        user = make_membership().user

        response = self.start(user.email, idempotency_key="key-1")

        record = IdempotencyRecord.objects.get()
        self.assertEqual((record.state, record.response_status), (IdempotencyState.DONE, 202))
        self.assertNotIn(response.json()["claim_token"], record.response_body)

    def test_same_key_on_the_other_endpoint_is_a_different_key(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        self.start(user.email, idempotency_key="key-1")

        response = self.complete(claim_token, code, idempotency_key="key-1")

        self.assertEqual(response.status_code, 200)


class IdempotentCompletionTests(HeadlessTestCase):
    def test_same_key_and_body_replays_the_token_without_minting_another(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        first = self.complete(claim_token, code, idempotency_key="key-2")

        replay = self.complete(claim_token, code, idempotency_key="key-2")

        self.assertEqual(replay.status_code, 200)
        self.assertEqual(replay.json()["access_token"], first.json()["access_token"])
        self.assertEqual(replay["Idempotent-Replayed"], "true")

    def test_replayed_wrong_code_does_not_cost_a_second_attempt(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        first = self.complete(claim_token, wrong_code(code), idempotency_key="key-2")

        replay = self.complete(claim_token, wrong_code(code), idempotency_key="key-2")

        self.assertEqual(replay.status_code, 400)
        self.assertEqual(replay.json(), first.json())
        self.assertEqual(Claim.objects.get(user=user).attempts, 1)

    def test_same_key_with_another_code_answers_idempotency_key_reused(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        self.complete(claim_token, wrong_code(code), idempotency_key="key-2")

        response = self.complete(claim_token, code, idempotency_key="key-2")

        self.assertEqual(response.status_code, 422)
        self.assertEqual(response.json()["error"]["code"], "idempotency_key_reused")
        self.assertEqual(Claim.objects.get(user=user).attempts, 1)

    def test_stored_answer_holds_no_access_token_in_clear(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)

        response = self.complete(claim_token, code, idempotency_key="key-2")

        record = IdempotencyRecord.objects.get(endpoint="complete")
        self.assertNotIn(response.json()["access_token"], record.response_body)
