"""Limits of the headless endpoints (docs/headless.md#limits): 60 registrations and 30 completions an hour
per IP, 5 verification emails an hour per recipient."""

import uuid

import redis
from django.test import override_settings

from agent_auth.models import Claim, IdempotencyRecord
from agent_auth.services import SUPPRESSED_EMAIL_DETAIL
from audit.models import AuditAction, AuditEvent
from tests.agent_auth.support import (
    COMPLETE_URL,
    START_URL,
    HeadlessTestCase,
    fresh_address,
    operator_overrides,
    post_json,
)
from tests.factories import make_membership
from tests.support import pinned_clock, require_redis_url


class IpLimitTests(HeadlessTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.enterContext(pinned_clock())  # every request of a test in one window

    def register(self, number: int, **headers: str):
        return post_json(
            self.client, START_URL, {"email": f"nobody{number}@example.test"}, address=self.address, **headers
        )

    def test_sixty_first_registration_from_one_address_within_the_hour_is_refused(self) -> None:
        for number in range(60):
            self.assertEqual(self.register(number).status_code, 202)

        response = self.register(60)

        self.assertEqual(response.status_code, 429)
        error = response.json()["error"]
        self.assertEqual(error["code"], "rate_limited")
        retry_after = int(response["Retry-After"])
        self.assertTrue(1 <= retry_after <= 3600)
        self.assertEqual(error["retryAfterSeconds"], retry_after)
        self.assertEqual(Claim.objects.count(), 60)

    def test_another_address_keeps_its_own_budget(self) -> None:
        for number in range(61):
            self.register(number)
        self.address = "192.0.2.200"

        response = self.register(61)

        self.assertEqual(response.status_code, 202)

    def test_thirty_first_completion_from_one_address_is_refused(self) -> None:
        for _ in range(30):
            body = {"claim_token": "unknown", "code": "123456"}
            self.assertEqual(post_json(self.client, COMPLETE_URL, body, address=self.address).status_code, 404)

        response = post_json(self.client, COMPLETE_URL, body, address=self.address)

        self.assertEqual(response.status_code, 429)
        self.assertEqual(response.json()["error"]["code"], "rate_limited")
        self.assertIn("Retry-After", response)

    def test_refused_request_leaves_its_idempotency_key_free(self) -> None:
        for number in range(60):
            self.register(number)

        response = self.register(60, **{"Idempotency-Key": "key-1"})

        self.assertEqual(response.status_code, 429)
        self.assertFalse(IdempotencyRecord.objects.exists())

    def test_repeated_starts_under_one_key_count_against_the_address(self) -> None:
        for _ in range(60):
            self.assertEqual(self.register(0, **{"Idempotency-Key": "key-1"}).status_code, 202)

        response = self.register(0, **{"Idempotency-Key": "key-1"})

        self.assertEqual(response.status_code, 429)
        self.assertEqual(Claim.objects.count(), 1)

    def test_conflicting_completions_under_one_key_count_against_the_address(self) -> None:
        key = {"Idempotency-Key": "key-1"}
        answers = [
            post_json(
                self.client, COMPLETE_URL, {"claim_token": "t", "code": f"{guess:06d}"}, address=self.address, **key
            ).status_code
            for guess in range(30)
        ]

        response = post_json(
            self.client, COMPLETE_URL, {"claim_token": "t", "code": "999999"}, address=self.address, **key
        )

        self.assertEqual(answers, [404] + [422] * 29)
        self.assertEqual(response.status_code, 429)

    def test_forwarded_for_is_ignored_without_trusted_proxies(self) -> None:
        for number in range(60):
            self.register(number, **{"X-Forwarded-For": f"198.51.100.{number}"})

        response = self.register(60, **{"X-Forwarded-For": "198.51.100.250"})

        self.assertEqual(response.status_code, 429)

    def test_forwarded_for_names_the_client_behind_a_trusted_proxy(self) -> None:
        with override_settings(OPERATOR=operator_overrides(trusted_proxies=1, proxy_networks=[self.address])):
            for number in range(60):
                self.register(number, **{"X-Forwarded-For": "198.51.100.1"})
            refused = self.register(60, **{"X-Forwarded-For": "198.51.100.1"})

            response = self.register(61, **{"X-Forwarded-For": "198.51.100.2"})

        self.assertEqual(refused.status_code, 429)
        self.assertEqual(response.status_code, 202)


class RecipientLimitTests(HeadlessTestCase):
    """Five verification emails an hour per recipient, from any address; the answer never changes."""

    def setUp(self) -> None:
        super().setUp()
        self.clock = self.enterContext(pinned_clock())

    def start_from_anywhere(self, email_address: str):
        self.address = fresh_address()  # the per-IP limit is not what stops them
        return self.start(email_address)

    def test_a_sixth_email_to_one_recipient_within_the_hour_is_not_sent(self) -> None:
        user = make_membership().user
        answers = [self.start_from_anywhere(user.email) for _ in range(6)]

        self.assertEqual(len(self.mails()), 5)
        self.assertEqual({answer.status_code for answer in answers}, {202})
        self.assertEqual({frozenset(answer.json()) for answer in answers}, {frozenset({"claim_token", "expires_in"})})
        self.assertEqual(Claim.objects.count(), 6)

    def test_the_suppressed_email_is_in_the_audit_trail_and_its_address_in_no_log(self) -> None:
        user = make_membership().user
        for _ in range(5):
            self.start_from_anywhere(user.email)

        with self.assertLogs(level="DEBUG") as logs:
            self.start_from_anywhere(user.email.upper())

        events = AuditEvent.objects.filter(action=AuditAction.CLAIM_START, person=user).order_by("id")
        self.assertEqual([event.detail for event in events], [{}] * 5 + [SUPPRESSED_EMAIL_DETAIL])
        self.assertNotIn(user.email.lower(), "\n".join(logs.output).lower())
        self.assertTrue(any("suppressed" in line for line in logs.output), logs.output)

    def test_the_claim_of_a_suppressed_email_can_never_complete(self) -> None:
        user = make_membership().user
        for _ in range(5):
            self.start_from_anywhere(user.email)
        codes = {mail.code for mail in self.mails()}

        claim_token = self.start_from_anywhere(user.email).json()["claim_token"]

        answers = {self.complete(claim_token, code).json()["error"]["code"] for code in codes}
        self.assertEqual(answers, {"invalid_code"})

    def test_an_unknown_email_is_counted_alike(self) -> None:
        for _ in range(6):
            self.start_from_anywhere("nobody@example.test")

        last = AuditEvent.objects.filter(action=AuditAction.CLAIM_START).latest("id")
        self.assertEqual(last.detail, SUPPRESSED_EMAIL_DETAIL)
        self.assertIsNone(last.person_id)

    def test_look_alike_spellings_of_an_account_s_email_share_its_count(self) -> None:
        # PostgreSQL's case-insensitive match maps "ı" to "I" and "ſ" to "S", which Python's lower() keeps:
        # each spelling that finds the account mails its one stored address. (SQLite's matches no spelling.)
        user = make_membership().user
        user.email = "alice@acme.test"
        user.save(update_fields=["email"])
        spellings = ["alice@acme.test", "al\u0131ce@acme.test", "alice@acme.te\u017ft", "al\u0131ce@acme.te\u017ft"]

        answers = [self.start_from_anywhere(spelling) for spelling in spellings for _ in range(5)]

        self.assertEqual({answer.status_code for answer in answers}, {202})
        self.assertEqual(len(self.mails()), 5)
        self.assertEqual({recipient for mail in self.mails() for recipient in mail.recipients}, {user.email})

    def test_an_unknown_email_is_counted_under_its_case_fold(self) -> None:
        for _ in range(5):
            self.start_from_anywhere("nobody@example.test")

        self.start_from_anywhere("NOBODY@EXAMPLE.TE\u017fT")

        last = AuditEvent.objects.filter(action=AuditAction.CLAIM_START).latest("id")
        self.assertEqual(last.detail, SUPPRESSED_EMAIL_DETAIL)

    def test_the_count_starts_again_an_hour_later(self) -> None:
        user = make_membership().user
        for _ in range(6):
            self.start_from_anywhere(user.email)
        self.clear_inbox()

        self.clock.advance(3600)
        self.start_from_anywhere(user.email)

        self.assertEqual(len(self.mails()), 1)

    def test_the_limit_is_a_setting(self) -> None:
        user = make_membership().user
        with override_settings(OPERATOR=operator_overrides(headless_emails_per_recipient_per_hour=2)):
            for _ in range(3):
                self.start_from_anywhere(user.email)

        self.assertEqual(len(self.mails()), 2)


class SharedCountTests(HeadlessTestCase):
    def test_counts_live_in_redis_where_every_worker_sees_them(self) -> None:
        redis_url = require_redis_url()
        prefix = f"rl:shared:{uuid.uuid4().hex}:"
        redis_cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
        with override_settings(CACHES={"default": {**redis_cache, "KEY_PREFIX": prefix}}):
            response = post_json(self.client, START_URL, {"email": "nobody@example.test"}, address=self.address)

        self.assertEqual(response.status_code, 202)
        # Another process reads Redis directly, not through this process's cache object.
        other_worker = redis.Redis.from_url(redis_url)
        self.addCleanup(other_worker.close)
        # The start counts twice: per address (this group) and per recipient (its own group).
        [key] = other_worker.keys(f"*{prefix}*:agent_auth.registration:*")
        self.assertEqual(int(other_worker.get(key)), 1)
