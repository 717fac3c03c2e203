"""Per-(person, organization, tool) rate and concurrency limits, in one process.

The concurrency tests hold a slot with the real `concurrency_slot` of
`mcp_operator.limits` (what an in-flight call does) while a second call goes
through the endpoint: a slow call can't be made inside one synchronous test
client. Across gunicorn workers and Redis, see test_limits_multiprocess.
"""

import uuid
from unittest import mock

import redis
from django.conf import settings
from django.test import override_settings

from mcp_operator.limits import RATE_WINDOW_SECONDS, concurrency_slot, slots_in_use
from operator_core.conf import operator_settings
from operator_core.errors import ErrorCode
from organizations.models import Role
from organizations.services import record_role_change
from tests.factories import make_membership, make_user
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.support import pinned_clock, require_redis_url


def with_limits(*, per_minute: int = 120, at_once: int = 4) -> override_settings:
    return override_settings(
        OPERATOR={**settings.OPERATOR, "tool_calls_per_minute": per_minute, "tool_concurrency": at_once}
    )


class RateLimitTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.enterContext(pinned_clock())  # every call of a test in one window

    @with_limits(per_minute=2)
    def test_calls_beyond_the_limit_per_minute_are_rate_limited(self) -> None:
        answers = [self.call_tool(self.member, "list_modules") for _ in range(3)]

        self.assertEqual([answer.error_code for answer in answers], [None, None, ErrorCode.RATE_LIMITED])
        retry_after = answers[2].error["retryAfterSeconds"]
        self.assertTrue(1 <= retry_after <= RATE_WINDOW_SECONDS)
        self.assertTrue(answers[2].result["isError"])

    @with_limits(per_minute=1)
    def test_a_knowledge_tool_reports_rate_limited_as_success_false(self) -> None:
        self.call_tool(self.member, "search_knowledge", query="helmets")

        result = self.call_tool(self.member, "search_knowledge", query="helmets")

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.RATE_LIMITED)
        self.assertGreaterEqual(result.error["retryAfterSeconds"], 1)

    @with_limits(per_minute=1)
    def test_each_tool_has_its_own_limit(self) -> None:
        self.call_tool(self.member, "list_modules")

        result = self.call_tool(self.member, "list_sources")

        self.assertIsNone(result.error_code)

    @with_limits(per_minute=1)
    def test_each_person_has_their_own_limit(self) -> None:
        colleague = make_membership(role=Role.MEMBER, organization=self.member.organization)
        self.call_tool(self.member, "list_modules")

        result = self.call_tool(colleague, "list_modules")

        self.assertIsNone(result.error_code)

    @with_limits(per_minute=1)
    def test_each_organization_of_a_person_has_its_own_limit(self) -> None:
        elsewhere = make_membership(role=Role.ADMIN, user=self.member.user)
        self.call_tool(self.member, "list_modules")

        result = self.call_tool(elsewhere, "list_modules")

        self.assertIsNone(result.error_code)

    @with_limits(per_minute=1)
    def test_a_forbidden_call_is_not_counted(self) -> None:
        record_role_change(membership=self.member, role=Role.LEARNER, changed_by=make_user())
        forbidden = self.call_tool(self.member, "list_modules")
        record_role_change(membership=self.member, role=Role.MEMBER, changed_by=make_user())

        result = self.call_tool(self.member, "list_modules")

        self.assertEqual(forbidden.error_code, ErrorCode.FORBIDDEN)
        self.assertIsNone(result.error_code)

    def test_the_default_is_120_calls_per_minute_and_4_at_once(self) -> None:
        self.assertEqual((operator_settings().tool_calls_per_minute, operator_settings().tool_concurrency), (120, 4))


class ConcurrencyLimitTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.slot = {
            "user_id": self.member.user_id,
            "organization_id": self.member.organization_id,
            "tool_name": "list_modules",
        }

    @with_limits(at_once=1)
    def test_a_call_while_the_only_slot_is_held_is_concurrency_limited(self) -> None:
        with concurrency_slot(**self.slot):
            result = self.call_tool(self.member, "list_modules")

        self.assertEqual(result.error_code, ErrorCode.CONCURRENCY_LIMITED)
        self.assertEqual(result.error["retryAfterSeconds"], 1)

    @with_limits(at_once=2)
    def test_a_call_with_a_free_slot_is_admitted(self) -> None:
        with concurrency_slot(**self.slot):
            result = self.call_tool(self.member, "list_modules")

        self.assertIsNone(result.error_code)

    @with_limits(at_once=1)
    def test_a_refused_call_holds_no_slot(self) -> None:
        with concurrency_slot(**self.slot):
            self.call_tool(self.member, "list_modules")

        self.assertEqual(slots_in_use(**self.slot), 0)

    @with_limits(at_once=1)
    def test_the_slot_is_given_back_when_the_call_ends(self) -> None:
        failed = self.call_tool(self.member, "list_modules", limit=0)

        result = self.call_tool(self.member, "list_modules")

        self.assertEqual(failed.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertIsNone(result.error_code)
        self.assertEqual(slots_in_use(**self.slot), 0)

    @with_limits(at_once=1)
    def test_another_tool_is_not_limited_by_a_held_slot(self) -> None:
        with concurrency_slot(**self.slot):
            result = self.call_tool(self.member, "list_sources")

        self.assertIsNone(result.error_code)


class RedisRoundTripTests(OperatorEndpointTestCase):
    """The limits cost a tool call two Redis round trips: count the rate and take a lease, give it back."""

    def setUp(self) -> None:
        redis_url = require_redis_url()
        redis_cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
        self.enterContext(override_settings(CACHES={"default": {**redis_cache, "KEY_PREFIX": uuid.uuid4().hex}}))
        self.member = make_membership(role=Role.MEMBER)

    def test_a_tool_call_makes_two_round_trips_to_redis(self) -> None:
        self.call_tool(self.member, "list_modules")  # loads the scripts into this Redis if it lacks them
        commands: list[str] = []
        send = redis.Redis.execute_command

        def counted(client: redis.Redis, *args: object, **options: object) -> object:
            commands.append(str(args[0]))
            return send(client, *args, **options)

        with mock.patch.object(redis.Redis, "execute_command", counted):
            result = self.call_tool(self.member, "list_modules")

        self.assertIsNone(result.error_code)
        self.assertEqual(commands, ["EVALSHA", "ZREM"])


class LeaseTests(OperatorEndpointTestCase):
    """A slot is a lease: one whose worker died lapses at its deadline, however many calls keep coming."""

    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.slot = {
            "user_id": self.member.user_id,
            "organization_id": self.member.organization_id,
            "tool_name": "list_modules",
        }
        self.clock = self.enterContext(pinned_clock())
        self.abandoned: list[object] = []

    def abandon_a_lease(self) -> None:
        # taken and never given back, as by a worker killed in the middle of a call (the
        # reference keeps the generator's `finally` from running when it is collected)
        lease = concurrency_slot(**self.slot)
        lease.__enter__()
        self.abandoned.append(lease)

    @with_limits(at_once=1)
    def test_an_abandoned_lease_refuses_calls_until_its_deadline(self) -> None:
        self.abandon_a_lease()

        refused = [self.call_tool(self.member, "list_modules") for _ in range(3)]
        self.clock.advance(operator_settings().tool_lease_seconds - 1)
        still_refused = self.call_tool(self.member, "list_modules")
        self.clock.advance(2)
        admitted = self.call_tool(self.member, "list_modules")

        self.assertEqual({result.error_code for result in refused}, {ErrorCode.CONCURRENCY_LIMITED})
        self.assertEqual(still_refused.error_code, ErrorCode.CONCURRENCY_LIMITED)
        self.assertIsNone(admitted.error_code)
        self.assertEqual(slots_in_use(**self.slot), 0)

    @with_limits(at_once=4)
    def test_all_slots_are_usable_again_after_the_lease_time_under_continued_traffic(self) -> None:
        for _ in range(2):
            self.abandon_a_lease()
        self.assertEqual(slots_in_use(**self.slot), 2)

        for _ in range(5):  # continued traffic does not keep the dead leases alive
            self.call_tool(self.member, "list_modules")
            self.clock.advance(operator_settings().tool_lease_seconds / 5)

        self.assertEqual(slots_in_use(**self.slot), 0)
        held = [concurrency_slot(**self.slot) for _ in range(4)]
        for lease in held:
            lease.__enter__()
        self.assertEqual(slots_in_use(**self.slot), 4)
        for lease in held:
            lease.__exit__(None, None, None)


class RedisLeaseTests(LeaseTests):
    def setUp(self) -> None:
        redis_url = require_redis_url()
        redis_cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
        self.enterContext(override_settings(CACHES={"default": {**redis_cache, "KEY_PREFIX": uuid.uuid4().hex}}))
        super().setUp()
