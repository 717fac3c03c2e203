"""The one fixed-window rate limiter, on the local-memory cache and on Redis.

Each case runs on both backends: the local-memory class always, the Redis class
when REDIS_URL is set (required under CI). Time is the pinned clock of
tests/support.py: windows roll over because the test moves the clock, never
because it waits.
"""

import threading
import uuid

import redis
from django.core.cache import cache
from django.test import SimpleTestCase, override_settings

from operator_core.errors import RateLimited
from operator_core.rate_limits import FixedWindowLimiter, parse_rate, require_within_limit
from tests.support import PinnedClock, pinned_clock, require_redis_url

PERIOD = 60


class LimiterCases:
    """The behaviour every backend must show; mixed into one SimpleTestCase per backend."""

    def setUp(self) -> None:
        super().setUp()
        self.clock = self.enterContext(pinned_clock())
        self.limiter = FixedWindowLimiter(group=f"test.{uuid.uuid4().hex}", limit=3, period_seconds=PERIOD)

    def counts(self, times: int, key: str = "k") -> list[int]:
        return [self.limiter.count(key).count for _ in range(times)]

    def test_counts_beyond_the_limit_are_exceeded(self) -> None:
        results = [self.limiter.count("k") for _ in range(4)]

        self.assertEqual([result.count for result in results], [1, 2, 3, 4])
        self.assertEqual([result.exceeded for result in results], [False, False, False, True])

    def test_retry_after_is_the_window_left_when_it_just_opened(self) -> None:
        self.counts(3)

        self.assertEqual(self.limiter.count("k").retry_after_seconds, PERIOD)

    def test_retry_after_rounds_up_what_is_left(self) -> None:
        self.counts(3)
        self.clock.advance(20.5)

        self.assertEqual(self.limiter.count("k").retry_after_seconds, 40)

    def test_retry_after_is_at_least_one_second(self) -> None:
        self.counts(3)
        self.clock.advance(PERIOD - 0.001)

        counted = self.limiter.count("k")

        self.assertTrue(counted.exceeded)
        self.assertEqual(counted.retry_after_seconds, 1)

    def test_the_window_rolls_over_when_the_clock_reaches_its_end(self) -> None:
        self.counts(4)
        self.clock.advance(PERIOD)

        self.assertEqual(self.counts(2), [1, 2])

    def test_the_window_opens_at_the_first_count_of_the_key(self) -> None:
        self.clock.advance(45)  # nothing in a wall-clock-aligned minute matters
        self.counts(3)
        self.clock.advance(PERIOD - 1)

        counted = self.limiter.count("k")

        self.assertEqual((counted.count, counted.retry_after_seconds), (4, 1))

    def test_each_key_and_each_group_counts_for_itself(self) -> None:
        other_group = FixedWindowLimiter(group=f"{self.limiter.group}.other", limit=3, period_seconds=PERIOD)
        self.counts(4, key="a")

        self.assertEqual(self.counts(1, key="b"), [1])
        self.assertEqual(other_group.count("a").count, 1)

    def test_a_clock_given_to_the_limiter_wins_over_the_module_clock(self) -> None:
        own_clock = PinnedClock(self.clock())
        own = FixedWindowLimiter(group=self.limiter.group, limit=3, period_seconds=PERIOD, clock=own_clock)
        [own.count("k") for _ in range(4)]
        self.clock.advance(PERIOD)  # the module's clock: not the one `own` reads

        still = own.count("k")
        own_clock.advance(PERIOD)
        next_window = own.count("k")

        self.assertEqual((still.count, next_window.count), (5, 1))

    def test_concurrent_counts_are_exact(self) -> None:
        threads, per_thread = 8, 25
        seen: list[int] = []
        lock = threading.Lock()
        barrier = threading.Barrier(threads)

        def count_many() -> None:
            barrier.wait()
            for _ in range(per_thread):
                number = self.limiter.count("shared").count
                with lock:
                    seen.append(number)

        workers = [threading.Thread(target=count_many) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=30)

        # every count got its own number: none lost, none doubled
        self.assertEqual(sorted(seen), list(range(1, threads * per_thread + 1)))

    def test_require_within_limit_raises_rate_limited_with_retry_after(self) -> None:
        self.counts(3)

        with self.assertRaises(RateLimited) as raised:
            require_within_limit(self.limiter, "k", message="Slow down.")

        self.assertEqual((raised.exception.message, raised.exception.retry_after_seconds), ("Slow down.", PERIOD))


@override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}})
class LocalMemoryLimiterTests(LimiterCases, SimpleTestCase):
    pass


class RedisLimiterTests(LimiterCases, SimpleTestCase):
    def setUp(self) -> None:
        redis_url = require_redis_url()
        redis_cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
        self.enterContext(override_settings(CACHES={"default": {**redis_cache, "KEY_PREFIX": uuid.uuid4().hex}}))
        self.raw = redis.Redis.from_url(redis_url)
        self.addCleanup(self.raw.close)
        super().setUp()

    def test_the_counter_is_a_plain_integer_that_expires_with_its_window(self) -> None:
        self.counts(2)
        key = cache.make_and_validate_key(self.limiter.cache_key("k"))

        self.assertEqual(int(self.raw.get(key)), 2)
        self.assertEqual(self.raw.pexpiretime(key), int(self.clock() * 1000) + PERIOD * 1000)
        self.assertEqual(cache.get(self.limiter.cache_key("k")), 2)


class ParseRateTests(SimpleTestCase):
    def test_units(self) -> None:
        self.assertEqual(
            [parse_rate(rate) for rate in ("5/s", "10/m", "60/h", "2/d")], [(5, 1), (10, 60), (60, 3600), (2, 86400)]
        )

    def test_an_unknown_unit_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            parse_rate("10/w")
