"""Idempotency-Key on both headless endpoints, kept 24 hours in the database (docs/headless.md#idempotency-key).

A replay goes only to whoever holds the secret its answer was made for: a
repeated start gets a new token for the same claim, never the first caller's;
a completion's key is found only under its own claim token, and another body
under it costs the claim an attempt.
"""

import uuid
from datetime import timedelta
from typing import Any

from django.test import Client
from django.utils import timezone

from agent_auth.idempotency import IN_FLIGHT_TIMEOUT_SECONDS, body_fingerprint
from agent_auth.models import Claim, ClaimStatus, IdempotencyRecord, IdempotencyState
from audit.models import AuditAction, AuditEvent
from tests.agent_auth.support import START_URL, HeadlessTestCase, fresh_address, post_json, wrong_code
from tests.factories import make_idempotency_record, make_membership


def new_key() -> str:
    return str(uuid.uuid4())


def other_codes(code: str, count: int) -> list[str]:
    """`count` distinct six-digit codes, none of them `code`."""
    return [f"{(int(code) + step) % 10**6:06d}" for step in range(1, count + 1)]


class IdempotentStartTests(HeadlessTestCase):
    def another_caller_starts(self, email_address: str, *, idempotency_key: str) -> Any:
        """The same request from someone else: another client, another address."""
        with self.captureOnCommitCallbacks(execute=True):
            return post_json(
                Client(), START_URL, {"email": email_address}, address=fresh_address(), idempotency_key=idempotency_key
            )

    def test_another_caller_repeating_a_start_never_gets_the_first_claim_token(self) -> None:
        user = make_membership().user
        key = new_key()
        first = self.start(user.email, idempotency_key=key)

        repeat = self.another_caller_starts(user.email, idempotency_key=key)

        self.assertEqual(repeat.status_code, 202)
        self.assertNotEqual(repeat.json()["claim_token"], first.json()["claim_token"])
        self.assertEqual(repeat["Idempotent-Replayed"], "true")

    def test_repeated_start_answers_a_new_token_for_the_same_claim_without_a_second_email(self) -> None:
        user = make_membership().user
        key = new_key()
        first = self.start(user.email, idempotency_key=key)

        repeat = self.start(user.email, idempotency_key=key)

        self.assertEqual(repeat.status_code, 202)
        self.assertEqual(set(repeat.json()), {"claim_token", "expires_in"})
        self.assertNotEqual(repeat.json()["claim_token"], first.json()["claim_token"])
        self.assertLessEqual(repeat.json()["expires_in"], 600)
        self.assertEqual(len(self.mails()), 1)
        self.assertEqual(Claim.objects.count(), 1)

    def test_retry_of_a_lost_start_completes_with_the_emailed_code(self) -> None:
        user = make_membership().user
        key = new_key()
        self.start(user.email, idempotency_key=key)  # the answer is lost on the way

        retried = self.start(user.email, idempotency_key=key)
        [mail] = self.mails()
        response = self.complete(retried.json()["claim_token"], mail.code, idempotency_key=new_key())

        self.assertEqual(response.status_code, 200)
        self.assertIn("access_token", response.json())

    def test_repeated_start_supersedes_the_earlier_token(self) -> None:
        user = make_membership().user
        key = new_key()
        first = self.start(user.email, idempotency_key=key)
        [mail] = self.mails()
        self.start(user.email, idempotency_key=key)

        response = self.complete(first.json()["claim_token"], mail.code)

        self.assertEqual(response.status_code, 404)
        self.assertEqual(response.json()["error"]["code"], "invalid_claim")
        self.assertEqual(Claim.objects.get().status, ClaimStatus.PENDING)

    def test_repeated_start_for_an_unknown_email_answers_alike(self) -> None:
        key = new_key()
        first = self.start("nobody@example.test", idempotency_key=key)

        repeat = self.start("nobody@example.test", idempotency_key=key)

        self.assertEqual(repeat.status_code, 202)
        self.assertNotEqual(repeat.json()["claim_token"], first.json()["claim_token"])
        self.assertEqual(repeat["Idempotent-Replayed"], "true")
        self.assertEqual(Claim.objects.count(), 1)

    def test_same_key_with_another_body_answers_idempotency_key_reused(self) -> None:
        user = make_membership().user
        key = new_key()
        self.start(user.email, idempotency_key=key)

        response = self.start(make_membership().user.email, idempotency_key=key)

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

    def test_key_older_than_24_hours_is_forgotten(self) -> None:
        user = make_membership().user
        self.start("someone-else@example.test")
        long_ago = timezone.now() - timedelta(hours=25)
        make_idempotency_record(
            key="key-1",
            fingerprint=body_fingerprint({"email": "someone-else@example.test"}),
            state=IdempotencyState.DONE,
            response_status=202,
            claim=Claim.objects.get(),
            created_at=long_ago,
        )

        response = self.start(user.email, idempotency_key="key-1")

        self.assertEqual(response.status_code, 202)
        self.assertNotIn("Idempotent-Replayed", response)
        self.assertEqual(len(self.mails()), 1)
        record = IdempotencyRecord.objects.get()
        self.assertEqual(record.fingerprint, body_fingerprint({"email": user.email}))

    def test_a_start_keeps_no_answer_only_its_claim(self) -> None:
        user = make_membership().user

        self.start(user.email, idempotency_key=new_key())

        record = IdempotencyRecord.objects.get()
        self.assertEqual((record.state, record.response_status), (IdempotencyState.DONE, 202))
        self.assertEqual(record.response_body, "")
        self.assertEqual(record.claim_id, Claim.objects.get().pk)

    def test_same_key_on_the_other_endpoint_is_a_different_key(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        self.start(user.email, idempotency_key="key-1")

        response = self.complete(claim_token, code, idempotency_key="key-1")

        self.assertEqual(response.status_code, 200)


class IdempotentCompletionTests(HeadlessTestCase):
    def test_retry_of_a_completion_with_its_claim_token_replays_the_token_without_minting_another(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        key = new_key()
        first = self.complete(claim_token, code, idempotency_key=key)

        replay = self.complete(claim_token, code, idempotency_key=key)

        self.assertEqual(replay.status_code, 200)
        self.assertEqual(replay.json()["access_token"], first.json()["access_token"])
        self.assertEqual(replay["Idempotent-Replayed"], "true")
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.CLAIM_COMPLETION).count(), 1)

    def test_replayed_wrong_code_does_not_cost_a_second_attempt(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        key = new_key()
        first = self.complete(claim_token, wrong_code(code), idempotency_key=key)

        replay = self.complete(claim_token, wrong_code(code), idempotency_key=key)

        self.assertEqual(replay.status_code, 400)
        self.assertEqual(replay.json(), first.json())
        self.assertEqual(Claim.objects.get(user=user).attempts, 1)

    def test_same_key_with_another_code_answers_idempotency_key_reused_and_costs_an_attempt(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        key = new_key()
        self.complete(claim_token, wrong_code(code), idempotency_key=key)

        response = self.complete(claim_token, code, idempotency_key=key)

        self.assertEqual(response.status_code, 422)
        self.assertEqual(response.json()["error"]["code"], "idempotency_key_reused")
        self.assertEqual(Claim.objects.get(user=user).attempts, 2)

    def test_probing_a_pending_claim_s_key_with_other_codes_ends_the_claim(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        key = new_key()
        first_guess, *probes = other_codes(code, 5)
        self.complete(claim_token, first_guess, idempotency_key=key)

        answers = [self.complete(claim_token, guess, idempotency_key=key).status_code for guess in probes]
        response = self.complete(claim_token, code, idempotency_key=new_key())

        self.assertEqual(answers, [422] * 4)
        claim = Claim.objects.get(user=user)
        self.assertEqual((claim.status, claim.attempts), (ClaimStatus.ENDED, 5))
        self.assertEqual(response.status_code, 410)
        self.assertEqual(response.json()["error"]["code"], "claim_ended")
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.CLAIM_END).count(), 1)

    def test_probing_a_completed_claim_s_key_with_other_codes_never_reaches_the_stored_token(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        key = new_key()
        self.assertEqual(self.complete(claim_token, code, idempotency_key=key).status_code, 200)

        answers = [self.complete(claim_token, guess, idempotency_key=key).status_code for guess in other_codes(code, 5)]
        response = self.complete(claim_token, code, idempotency_key=key)

        self.assertEqual(answers, [422] * 5)
        self.assertEqual(Claim.objects.get(user=user).attempts, 5)
        self.assertEqual(response.status_code, 410)
        self.assertEqual(response.json()["error"]["code"], "claim_ended")
        self.assertNotIn("access_token", response.json())
        self.assertEqual(Claim.objects.get(user=user).status, ClaimStatus.COMPLETED)  # still a connection

    def test_another_claim_token_under_the_same_key_neither_sees_nor_probes_the_record(self) -> None:
        first_user, second_user = make_membership().user, make_membership().user
        first_token, first_code = self.start_and_read_code(first_user.email)
        self.clear_inbox()
        second_token, second_code = self.start_and_read_code(second_user.email)
        key = new_key()
        self.complete(first_token, first_code, idempotency_key=key)

        probe = self.complete(second_token, wrong_code(second_code), idempotency_key=key)

        self.assertEqual(probe.status_code, 400)
        self.assertEqual(probe.json()["error"]["code"], "invalid_code")
        self.assertNotIn("Idempotent-Replayed", probe)
        self.assertEqual(Claim.objects.get(user=first_user).attempts, 0)
        self.assertEqual(Claim.objects.get(user=second_user).attempts, 1)

    def test_another_claim_token_under_the_same_key_completes_its_own_claim(self) -> None:
        first_user, second_user = make_membership().user, make_membership().user
        first_token, first_code = self.start_and_read_code(first_user.email)
        self.clear_inbox()
        second_token, second_code = self.start_and_read_code(second_user.email)
        key = new_key()
        first = self.complete(first_token, first_code, idempotency_key=key)

        response = self.complete(second_token, second_code, idempotency_key=key)

        self.assertEqual(response.status_code, 200)
        self.assertNotIn("Idempotent-Replayed", response)
        self.assertNotEqual(response.json()["access_token"], first.json()["access_token"])

    def test_a_completion_replay_still_needs_the_token_it_was_made_with_after_a_repeated_start(self) -> None:
        user = make_membership().user
        start_key, completion_key = new_key(), new_key()
        claim_token = self.start(user.email, idempotency_key=start_key).json()["claim_token"]
        [mail] = self.mails()
        first = self.complete(claim_token, mail.code, idempotency_key=completion_key)
        reissued = self.start(user.email, idempotency_key=start_key).json()["claim_token"]

        stranger = self.complete(reissued, mail.code, idempotency_key=completion_key)
        owner = self.complete(claim_token, mail.code, idempotency_key=completion_key)

        self.assertEqual(stranger.status_code, 410)
        self.assertEqual(stranger.json()["error"]["code"], "claim_used")
        self.assertEqual(owner.status_code, 200)
        self.assertEqual(owner.json()["access_token"], first.json()["access_token"])

    def test_answer_sealed_under_a_previous_secret_key_is_forgotten(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        key, [guess] = new_key(), other_codes(code, 1)
        with self.settings(SECRET_KEY="a-previous-secret-key-used-only-in-this-test"):
            self.complete(claim_token, guess, idempotency_key=key)

        response = self.complete(claim_token, guess, idempotency_key=key)

        self.assertNotIn("Idempotent-Replayed", response)
        self.assertEqual(IdempotencyRecord.objects.filter(endpoint="complete").count(), 1)

    def test_stored_answer_holds_no_access_token_in_clear(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)

        response = self.complete(claim_token, code, idempotency_key=new_key())

        record = IdempotencyRecord.objects.get(endpoint="complete")
        self.assertNotIn(response.json()["access_token"], record.response_body)
        self.assertEqual(record.claim_id, Claim.objects.get(user=user).pk)
