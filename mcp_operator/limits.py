"""Per-(person, organization, tool) rate and concurrency limits of tool calls (contract §8).

Both counters live in Django's default cache and rely only on its atomic
`add` and `incr`/`decr`. With `REDIS_URL` set that cache is Redis, whose INCR is
atomic across every gunicorn worker, so the limits are exact for the whole
deployment. The embedded default (no `REDIS_URL`) is the per-process local-memory
cache: exact for the one process `make run` serves, per worker otherwise
(product decisions §8, docs/tools.md "Limits").

- Rate: a fixed one-minute window (`tool_calls_per_minute`, default 120). Every
  admitted-or-refused attempt past the role and selector checks counts.
- Concurrency: calls in flight (`tool_concurrency`, default 4). A slot is taken on
  entry and given back in `finally`; the key's TTL (refreshed on every entry) is the
  safety net for a worker that dies holding a slot. A refused call holds no slot.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator

from django.core.cache import cache

from operator_site.conf import operator_settings
from operator_site.errors import ConcurrencyLimited, RateLimited

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


def _increment(key: str, *, timeout: int) -> int:
    """Add one to the counter at `key`, creating it with `timeout` when absent; atomic.

    `incr` first: the counter usually exists, and this order costs one round trip
    less than `add` first.
    """
    try:
        return cache.incr(key)
    except ValueError:
        if cache.add(key, 1, timeout=timeout):
            return 1
        return cache.incr(key)  # created by another call in between


def _decrement(key: str) -> None:
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
    in_flight = _increment(key, timeout=CONCURRENCY_TTL_SECONDS)
    # refreshed on every entry, so that the counter always has a TTL even when
    # it expired and was recreated between two commands
    cache.touch(key, CONCURRENCY_TTL_SECONDS)
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
