"""Per-IP limits of the headless endpoints (docs/headless.md#limits): 60 registrations and 30 completions an hour."""

import uuid

import redis
from django.test import override_settings

from agent_auth.models import Claim, IdempotencyRecord
from tests.agent_auth.support import (
    COMPLETE_URL,
    START_URL,
    HeadlessTestCase,
    operator_overrides,
    post_json,
)
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
        with override_settings(OPERATOR=operator_overrides(trusted_proxies=1)):
            for number in range(60):
                self.register(number, **{"X-Forwarded-For": "198.51.100.1"})
            refused = self.register(60, **{"X-Forwarded-For": "198.51.100.1"})

            response = self.register(61, **{"X-Forwarded-For": "198.51.100.2"})

        self.assertEqual(refused.status_code, 429)
        self.assertEqual(response.status_code, 202)


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
        [key] = other_worker.keys(f"*{prefix}*")
        self.assertEqual(int(other_worker.get(key)), 1)
