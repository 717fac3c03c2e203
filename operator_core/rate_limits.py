"""The one fixed-window rate limiter of the service, on Django's default cache.

Every request budget counts through `FixedWindowLimiter`: tool calls
(`mcp_operator.limits`), sign-in per IP address and per email, the OAuth and
headless endpoints and the docs endpoint (docs/limits.md). A window is
anchored at its key's first count; on Redis one Lua script counts atomically
across workers, elsewhere a process lock does. When Redis does not answer,
each limiter follows its own `on_outage` policy. Tests replace the module's
`clock` (or pass a limiter its own) instead of sleeping to a window's edge.
Why each of these: docs/development/decisions.md#limits.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import redis
from django.conf import settings
from django.core.cache import BaseCache, cache, caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest

from operator_core.client_ip import client_ip
from operator_core.errors import RateLimited, TemporarilyUnavailable
from operator_core.local_cache import LocalMemoryCache
from operator_core.outages import REDIS_OUTAGES
from operator_core.telemetry import metrics

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
# The default clock of every limiter; tests replace it (see the module docstring).
clock: Clock = time.time

KEY_PREFIX = "rate_limits"
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

# count_in_window(key, now ms, period ms): count one under `key`; a missing or ended
# window opens a new one. Returns the count and the window's end (ms). A Lua function,
# so that a script that counts and then does more (a tool call's lease) shares it.
WINDOW_COUNT_LUA = """
local function count_in_window(key, now, period)
  local ends = redis.call('PEXPIRETIME', key)
  if ends < 0 or ends <= now then
    ends = now + period
    redis.call('SET', key, 1, 'PXAT', ends)
    return 1, ends
  end
  return redis.call('INCR', key), ends
end
"""
_COUNT_SCRIPT = (
    WINDOW_COUNT_LUA
    + """
local count, ends = count_in_window(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
return {count, ends}
"""
)

# Serializes the read-and-rewrite of a window on a cache without scripts.
_LOCAL_LOCK = threading.Lock()
# Where COUNT_PER_PROCESS limiters count while Redis is away: this process's memory only.
OUTAGE_STORE: BaseCache = LocalMemoryCache("operator-rate-limits-outage", {})
# One warning per this many seconds and process: an outage fails every request alike.
_OUTAGE_LOG_INTERVAL_SECONDS = 10
_last_outage_log = [0.0]


class OnOutage(StrEnum):
    """What a limiter does when Redis does not answer (module docstring)."""

    REFUSE = "refuse"
    COUNT_PER_PROCESS = "count_per_process"


@functools.cache
def _redis_client(location: str) -> redis.Redis:
    # The cache's own connection options (timeouts, retries) apply to the scripts too.
    return redis.Redis.from_url(location, **settings.CACHES["default"].get("OPTIONS", {}))


def default_redis_client() -> redis.Redis | None:
    """The Redis client behind Django's default cache, or None when that cache is not Redis.

    One client (one connection pool) per process, shared with every other script
    that counts in the default cache (the concurrency slots of `mcp_operator`).
    """
    # `cache` is a proxy; the backend behind it tells which counting applies.
    if not isinstance(caches["default"], RedisCache):
        return None
    return _redis_client(settings.CACHES["default"]["LOCATION"])


@functools.cache
def _count_script(client: redis.Redis) -> redis.commands.core.Script:
    return client.register_script(_COUNT_SCRIPT)


@dataclass(frozen=True)
class WindowCount:
    """One count: the window's total so far (this one included) and what is left of it."""

    count: int
    limit: int
    seconds_left: float
    # when the window ends (clock seconds): tells this window from the next in `uncount_in`
    ends: float = 0.0

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def retry_after_seconds(self) -> int:
        """Whole seconds left in the window, at least 1 (a `Retry-After` of 0 invites a retry loop)."""
        return max(1, math.ceil(self.seconds_left))


@dataclass(frozen=True)
class FixedWindowLimiter:
    """At most `limit` counts per key in each window of `period_seconds`, under `group`."""

    group: str
    limit: int
    period_seconds: int
    clock: Clock | None = None
    on_outage: OnOutage = OnOutage.REFUSE

    def cache_key(self, key: str) -> str:
        """The counter's key before Django's cache adds its prefix and version."""
        return f"{KEY_PREFIX}:{self.group}:{key}"

    def count(self, key: str) -> WindowCount:
        """Count one attempt under `key`, admitted or not; atomic wherever the cache is shared.

        Raises `TemporarilyUnavailable` when Redis does not answer and the policy is to refuse.
        """
        now = (self.clock or clock)()
        client = default_redis_client()
        if client is None:
            return self.count_in(cache, key, now=now)
        try:
            count, ends_ms = _count_script(client)(
                keys=[cache.make_key(self.cache_key(key))],
                args=[math.floor(now * 1000), self.period_seconds * 1000],
            )
        except REDIS_OUTAGES as failure:
            return self.count_in(outage_store(self.on_outage, failure, group=self.group), key, now=now)
        return WindowCount(count=int(count), limit=self.limit, seconds_left=int(ends_ms) / 1000 - now)

    def count_in(self, store: BaseCache, key: str, *, now: float) -> WindowCount:
        """Count under `key` in a cache of this process (the embedded default, or during an outage)."""
        key = self.cache_key(key)
        with _LOCAL_LOCK:
            ends, count = store.get(key) or (now, 0)
            if ends <= now:
                ends, count = now + self.period_seconds, 0
            count += 1
            # the cache's own expiry only collects windows that ended: `ends` decides
            store.set(key, (ends, count), timeout=self.period_seconds)
        return WindowCount(count=count, limit=self.limit, seconds_left=ends - now, ends=ends)

    def uncount_in(self, store: BaseCache, key: str, counted: WindowCount) -> None:
        """Take back one count of `count_in` if its window has not ended (a refusal that must not count)."""
        key = self.cache_key(key)
        with _LOCAL_LOCK:
            ends, count = store.get(key) or (0.0, 0)
            if ends == counted.ends and count > 0:
                store.set(key, (ends, count - 1), timeout=self.period_seconds)


def outage_store(policy: OnOutage, failure: Exception, *, group: str) -> BaseCache:
    """Apply `policy` to a Redis outage: raise `TemporarilyUnavailable`, or return the per-process store."""
    now = time.monotonic()
    if now - _last_outage_log[0] >= _OUTAGE_LOG_INTERVAL_SECONDS:
        _last_outage_log[0] = now
        logger.warning("redis unavailable (%s): limit %s %s", type(failure).__name__, group, policy)
    if policy == OnOutage.REFUSE:
        raise TemporarilyUnavailable() from failure
    return OUTAGE_STORE


def parse_rate(rate: str) -> tuple[int, int]:
    """`"10/m"` -> (10, 60): the limit and the window in seconds (units s, m, h, d)."""
    limit, _, unit = rate.partition("/")
    if unit not in PERIODS:
        raise ValueError(f"rate {rate!r} is not <count>/<s|m|h|d>")
    return int(limit), PERIODS[unit]


def require_within_limit(limiter: FixedWindowLimiter, key: str, *, message: str) -> None:
    """Count one attempt under `key`; raise `RateLimited` once over the limit."""
    counted = limiter.count(key)
    if counted.exceeded:
        metrics.count_limit_refusal(limiter.group)
        raise RateLimited(message, retry_after_seconds=counted.retry_after_seconds)


def require_within_ip_limit(
    request: HttpRequest, *, group: str, rate: str, message: str, on_outage: OnOutage = OnOutage.REFUSE
) -> None:
    """Count this request against the client's address; raise `RateLimited` once over `rate`."""
    limit, period_seconds = parse_rate(rate)
    limiter = FixedWindowLimiter(group=group, limit=limit, period_seconds=period_seconds, on_outage=on_outage)
    require_within_limit(limiter, client_ip(request), message=message)
