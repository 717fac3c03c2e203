"""Per-(person, organization, tool) rate and concurrency limits of tool calls (docs/tools.md#limits).

- Rate: `tool_calls_per_minute` (default 120) in a one-minute window, counted by
  the service's one rate limiter (`operator_core.rate_limits`: the window opens
  at the first call of the key and `retryAfterSeconds` is what is left of it).
  Every admitted-or-refused attempt past the role and selector checks counts.
- Concurrency: calls in flight (`tool_concurrency`, default 4). A slot is taken on
  entry and given back in `finally`; the key's TTL (refreshed on every entry) is the
  safety net for a worker that dies holding a slot. A refused call holds no slot.

Both counters live in Django's default cache. With `REDIS_URL` set that cache is
Redis, and each step is one Lua script (count in the window; take a slot and
re-arm its expiry; give a slot back only if present): atomic across every
gunicorn worker, so the limits are exact for the whole deployment, at one round
trip a step (three a call) where Django's cache API needs two or three each. The
keys are Django's own (`make_and_validate_key`), so `cache.get` reads the slot
counters. The embedded default (no `REDIS_URL`) is the per-process local-memory
cache, through its atomic `add` and `incr`/`decr`: exact for the one process
`make run` serves, per worker otherwise (docs/development/decisions.md#limits, docs/tools.md
"Limits").
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

import redis
from django.core.cache import cache

from operator_core.conf import operator_settings
from operator_core.errors import ConcurrencyLimited
from operator_core.rate_limits import FixedWindowLimiter, default_redis_client, require_within_limit

RATE_WINDOW_SECONDS = 60
RATE_GROUP = "mcp_operator.tool-calls"
# A crashed worker's slot is freed at the latest this long after the last entry.
CONCURRENCY_TTL_SECONDS = 60
KEY_PREFIX = "mcp_operator:limits"


def concurrency_key(*, user_id: object, organization_id: object, tool_name: str) -> str:
    """Cache key of the in-flight call counter."""
    return f"{KEY_PREFIX}:concurrency:{user_id}:{organization_id}:{tool_name}"


# INCR and re-arm the expiry: one atomic step.
_TAKE_SLOT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return count
"""
# DECR only an existing counter: one that expired meanwhile has nothing to give back.
_GIVE_BACK_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return false
"""


@functools.cache
def _slot_scripts(client: redis.Redis) -> tuple[redis.commands.core.Script, redis.commands.core.Script]:
    return client.register_script(_TAKE_SLOT_SCRIPT), client.register_script(_GIVE_BACK_SCRIPT)


def _take_slot(key: str) -> int:
    """Add one to the in-flight counter at `key` and (re)arm its expiry; atomic. The new count."""
    client = default_redis_client()
    if client is not None:
        return int(_slot_scripts(client)[0](keys=[cache.make_and_validate_key(key)], args=[CONCURRENCY_TTL_SECONDS]))
    try:
        count = cache.incr(key)
    except ValueError:
        if cache.add(key, 1, timeout=CONCURRENCY_TTL_SECONDS):
            return 1
        count = cache.incr(key)  # created by another call in between
    cache.touch(key, CONCURRENCY_TTL_SECONDS)
    return count


def _give_back_slot(key: str) -> None:
    client = default_redis_client()
    if client is not None:
        _slot_scripts(client)[1](keys=[cache.make_and_validate_key(key)])
        return
    with contextlib.suppress(ValueError):  # expired meanwhile: nothing left to give back
        cache.decr(key)


def count_call(*, user_id: object, organization_id: object, tool_name: str) -> None:
    """Count one call in its one-minute window; raise `RateLimited` once over the limit.

    `retryAfterSeconds` is the time left in the window, at least 1.
    """
    limit = operator_settings().tool_calls_per_minute
    limiter = FixedWindowLimiter(group=RATE_GROUP, limit=limit, period_seconds=RATE_WINDOW_SECONDS)
    require_within_limit(
        limiter,
        f"{user_id}:{organization_id}:{tool_name}",
        message=f"Too many calls of {tool_name}: at most {limit} per minute.",
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
    in_flight = _take_slot(key)
    if in_flight > limit:
        _give_back_slot(key)
        raise ConcurrencyLimited(
            f"Too many simultaneous calls of {tool_name}: at most {limit} at once.",
            retry_after_seconds=1,
        )
    try:
        yield
    finally:
        _give_back_slot(key)


@contextlib.contextmanager
def tool_call_limits(*, user_id: object, organization_id: object, tool_name: str) -> Iterator[None]:
    """Apply both limits to one call: rate first, then a concurrency slot for the block."""
    count_call(user_id=user_id, organization_id=organization_id, tool_name=tool_name)
    with concurrency_slot(user_id=user_id, organization_id=organization_id, tool_name=tool_name):
        yield
