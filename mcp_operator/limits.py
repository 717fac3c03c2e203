"""Per-(person, organization, tool) rate and concurrency limits of tool calls (docs/tools.md#limits).

Both counters live in Django's default cache. With `REDIS_URL` set that cache is
Redis, and each counter step is one Lua script (increment and set the expiry, or
decrement only if present): atomic across every gunicorn worker, so the limits
are exact for the whole deployment, at one round trip a step where Django's
cache API needs two or three. The keys are Django's own (`make_and_validate_key`),
so `cache.get` reads the same counters. The embedded default (no `REDIS_URL`) is
the per-process local-memory cache, through its atomic `add` and `incr`/`decr`:
exact for the one process `make run` serves, per worker otherwise
(docs/development/decisions.md#limits, docs/tools.md "Limits").

- Rate: a fixed one-minute window (`tool_calls_per_minute`, default 120). Every
  admitted-or-refused attempt past the role and selector checks counts.
- Concurrency: calls in flight (`tool_concurrency`, default 4). A slot is taken on
  entry and given back in `finally`; the key's TTL (refreshed on every entry) is the
  safety net for a worker that dies holding a slot. A refused call holds no slot.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Iterator

import redis
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache

from operator_core.conf import operator_settings
from operator_core.errors import ConcurrencyLimited, RateLimited

RATE_WINDOW_SECONDS = 60
# A crashed worker's slot is freed at the latest this long after the last entry.
CONCURRENCY_TTL_SECONDS = 60
KEY_PREFIX = "mcp_operator:limits"


def rate_key(*, user_id: object, organization_id: object, tool_name: str, window: int) -> str:
    """Cache key of one fixed window's call counter."""
    return f"{KEY_PREFIX}:rate:{user_id}:{organization_id}:{tool_name}:{window}"


def concurrency_key(*, user_id: object, organization_id: object, tool_name: str) -> str:
    """Cache key of the in-flight call counter."""
    return f"{KEY_PREFIX}:concurrency:{user_id}:{organization_id}:{tool_name}"


# INCR, then (re)arm the expiry when the counter is new or `refresh` asks: one atomic step.
_INCREMENT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 or ARGV[2] == '1' then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""
# DECR only an existing counter: one that expired meanwhile has nothing to give back.
_DECREMENT_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return false
"""


@functools.cache
def _redis_scripts(location: str) -> tuple[redis.commands.core.Script, redis.commands.core.Script]:
    client = redis.Redis.from_url(location)
    return client.register_script(_INCREMENT_SCRIPT), client.register_script(_DECREMENT_SCRIPT)


def _scripts_or_none() -> tuple[redis.commands.core.Script, redis.commands.core.Script] | None:
    # `cache` is a proxy; the backend behind it tells which counters apply.
    if not isinstance(caches["default"], RedisCache):
        return None
    return _redis_scripts(settings.CACHES["default"]["LOCATION"])


def _increment(key: str, *, timeout: int, refresh: bool = False) -> int:
    """Add one to the counter at `key`, creating it with `timeout` when absent; atomic.

    `refresh` re-arms the expiry on every increment, not only on creation.
    """
    scripts = _scripts_or_none()
    if scripts is not None:
        return int(scripts[0](keys=[cache.make_and_validate_key(key)], args=[timeout, int(refresh)]))
    try:
        count = cache.incr(key)
    except ValueError:
        if cache.add(key, 1, timeout=timeout):
            return 1
        count = cache.incr(key)  # created by another call in between
    if refresh:
        cache.touch(key, timeout)
    return count


def _decrement(key: str) -> None:
    scripts = _scripts_or_none()
    if scripts is not None:
        scripts[1](keys=[cache.make_and_validate_key(key)])
        return
    with contextlib.suppress(ValueError):  # expired meanwhile: nothing left to give back
        cache.decr(key)


def count_call(*, user_id: object, organization_id: object, tool_name: str) -> None:
    """Count one call in the current minute; raise `RateLimited` once over the limit.

    `retryAfterSeconds` is the time left in the window, at least 1.
    """
    limit = operator_settings().tool_calls_per_minute
    now = time.time()
    window = int(now // RATE_WINDOW_SECONDS)
    key = rate_key(user_id=user_id, organization_id=organization_id, tool_name=tool_name, window=window)
    # two windows of life: the key can't expire while its window is current
    count = _increment(key, timeout=2 * RATE_WINDOW_SECONDS)
    if count > limit:
        retry_after = max(1, math.ceil((window + 1) * RATE_WINDOW_SECONDS - now))
        raise RateLimited(
            f"Too many calls of {tool_name}: at most {limit} per minute.",
            retry_after_seconds=retry_after,
        )


@contextlib.contextmanager
def concurrency_slot(*, user_id: object, organization_id: object, tool_name: str) -> Iterator[None]:
    """Hold one of the `tool_concurrency` slots for the duration of the block.

    Raises `ConcurrencyLimited` (retryAfterSeconds 1) when all slots are taken;
    the refused attempt gives its increment back at once.
    """
    limit = operator_settings().tool_concurrency
    key = concurrency_key(user_id=user_id, organization_id=organization_id, tool_name=tool_name)
    # the expiry is re-armed on every entry: a dead worker's slot lapses at the latest
    # CONCURRENCY_TTL_SECONDS after the last call began
    in_flight = _increment(key, timeout=CONCURRENCY_TTL_SECONDS, refresh=True)
    if in_flight > limit:
        _decrement(key)
        raise ConcurrencyLimited(
            f"Too many simultaneous calls of {tool_name}: at most {limit} at once.",
            retry_after_seconds=1,
        )
    try:
        yield
    finally:
        _decrement(key)


@contextlib.contextmanager
def tool_call_limits(*, user_id: object, organization_id: object, tool_name: str) -> Iterator[None]:
    """Apply both limits to one call: rate first, then a concurrency slot for the block."""
    count_call(user_id=user_id, organization_id=organization_id, tool_name=tool_name)
    with concurrency_slot(user_id=user_id, organization_id=organization_id, tool_name=tool_name):
        yield
