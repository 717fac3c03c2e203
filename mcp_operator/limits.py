"""Per-(person, organization, tool) rate and concurrency limits of tool calls (docs/tools.md#limits).

Rate: `tool_calls_per_minute` through `operator_core.rate_limits`, counting
every attempt past the role and selector checks. Concurrency: `tool_concurrency`
leases, each with its own deadline (`tool_lease_seconds`, longer than any call
may run); a call's lease is given back once its answer is sent (when Django
closes the response, `request_finished`), so no round trip to Redis stands
between the read and the answer. A lease whose worker died lapses, and a
refused call holds none. On Redis both are one Lua script, exact across
workers and machines; without `REDIS_URL`, the local-memory cache under a lock;
during a Redis outage, this process's memory (`ON_OUTAGE`). Why:
docs/development/decisions.md#limits.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator

import redis
from django.core.cache import DEFAULT_CACHE_ALIAS, BaseCache, cache, caches
from django.core.signals import request_finished, request_started

from operator_core import rate_limits
from operator_core.conf import operator_settings
from operator_core.errors import ConcurrencyLimited, RateLimited
from operator_core.outages import REDIS_OUTAGES
from operator_core.rate_limits import (
    WINDOW_COUNT_LUA,
    FixedWindowLimiter,
    OnOutage,
    WindowCount,
    default_redis_client,
    outage_store,
)
from operator_core.telemetry import metrics

logger = logging.getLogger(__name__)

RATE_WINDOW_SECONDS = 60
RATE_GROUP = "mcp_operator.tool-calls"
# The concurrency limit, as the metrics name it (docs/operations.md#metrics).
CONCURRENCY_LIMIT = "mcp_operator.tool-concurrency"
# Tool calls are authenticated and these limits share capacity fairly rather than guard a
# secret: while Redis is away, each process keeps counting on its own (docs/operations.md#outages).
ON_OUTAGE = OnOutage.COUNT_PER_PROCESS
KEY_PREFIX = "mcp_operator:limits"

# KEYS[1] the rate window, KEYS[2] the leases; ARGV[1] now (ms), ARGV[2] window (ms),
# ARGV[3] the rate limit (0: take a lease without counting), ARGV[4] the slots,
# ARGV[5] the lease's deadline (ms), ARGV[6] its id. Returns {count, window end, taken}
# where taken is 1, 0 (over the rate: no lease asked) or -1 (every slot held).
_ADMIT_SCRIPT = (
    WINDOW_COUNT_LUA
    + """
local count, ends = 0, 0
if ARGV[3] ~= '0' then
  count, ends = count_in_window(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
  if count > tonumber(ARGV[3]) then return {count, ends, 0} end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {count, ends, -1} end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
redis.call('PEXPIREAT', KEYS[2], ARGV[5], 'GT')
return {count, ends, 1}
"""
)

# KEYS[1] the rate window, KEYS[2] the leases; ARGV[1] the window's end (ms) when the call was
# counted, ARGV[2] the lease's id. Gives the lease back and takes the count back if that window
# still runs: a call refused after it was counted, by a check that counts nothing.
_UNCOUNT_SCRIPT = """
if redis.call('PEXPIRETIME', KEYS[1]) == tonumber(ARGV[1]) and tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
return redis.call('ZREM', KEYS[2], ARGV[2])
"""

# Serializes the read-and-rewrite of the leases on a cache without scripts.
_LOCAL_LEASES_LOCK = threading.Lock()

# Per thread (a sync worker serves one request per thread): the leases of this request's
# calls, given back when its response is closed; absent outside a request.
_request = threading.local()


def leases_key(*, user_id: object, organization_id: object, tool_name: str) -> str:
    """Cache key of the leases of calls in flight."""
    return f"{KEY_PREFIX}:leases:{user_id}:{organization_id}:{tool_name}"


def slots_in_use(*, user_id: object, organization_id: object, tool_name: str) -> int:
    """How many leases are held and not lapsed (for tests and operators)."""
    key = leases_key(user_id=user_id, organization_id=organization_id, tool_name=tool_name)
    now_ms = _now_ms()
    client = default_redis_client()
    if client is not None:
        return int(client.zcount(cache.make_key(key), f"({now_ms}", "+inf"))
    return sum(1 for deadline in (cache.get(key) or {}).values() if deadline > now_ms)


@functools.cache
def _uncount_script(client: redis.Redis) -> redis.commands.core.Script:
    return client.register_script(_UNCOUNT_SCRIPT)


@functools.cache
def _admit_script(client: redis.Redis) -> redis.commands.core.Script:
    return client.register_script(_ADMIT_SCRIPT)


class CountedCall:
    """The block of `tool_call_limits`: `uncount()` takes its count back when its lease is given back."""

    uncounted = False

    def uncount(self) -> None:
        self.uncounted = True


@contextlib.contextmanager
def tool_call_limits(
    *, user_id: object, organization_id: object, tool_name: str, before_refusal: Callable[[], object] | None = None
) -> Iterator[CountedCall]:
    """Count one call against the rate, then hold a concurrency lease for the block.

    Raises `RateLimited` over the rate, `ConcurrencyLimited` (retryAfterSeconds 1)
    when every slot is held; a refused call holds nothing. Inside a request the
    lease is held on until the response is closed (`release_deferred_leases`).
    For a check that counts nothing and beats these two (the role's), made after
    them: `before_refusal` runs before either refusal, and whatever it raises
    is raised instead, the count taken back; a call refused inside the block by
    that check calls `uncount()`, and its count goes back with its lease. A count
    goes back only while its window runs.
    """
    counted = CountedCall()
    with _lease(
        user_id=user_id,
        organization_id=organization_id,
        tool_name=tool_name,
        count=True,
        defer=True,
        call=counted,
        before_refusal=before_refusal,
    ):
        yield counted


def release_deferred_leases(**_: object) -> None:
    """Give back the leases of this thread's request: its response was sent and closed.

    A `request_finished` receiver; it also runs on `request_started`, so a
    request whose response was never closed cannot leave a lease to the next.
    """
    releases = getattr(_request, "releases", None)
    _request.releases = None
    for release in releases or ():
        try:
            release()
        except Exception:
            # The answer is out; a lease that could not be given back lapses at its deadline.
            logger.exception("a lease of %s could not be given back", RATE_GROUP)


def _begin_request(**_: object) -> None:
    release_deferred_leases()
    _request.releases = []


request_started.connect(_begin_request)
request_finished.connect(release_deferred_leases)


@contextlib.contextmanager
def concurrency_slot(*, user_id: object, organization_id: object, tool_name: str) -> Iterator[None]:
    """Hold one lease for the block without counting a call (a call elsewhere, in tests)."""
    with _lease(user_id=user_id, organization_id=organization_id, tool_name=tool_name, count=False):
        yield


def _limiter() -> FixedWindowLimiter:
    return FixedWindowLimiter(
        group=RATE_GROUP,
        limit=operator_settings().tool_calls_per_minute,
        period_seconds=RATE_WINDOW_SECONDS,
        on_outage=ON_OUTAGE,
    )


@contextlib.contextmanager
def _lease(
    *,
    user_id: object,
    organization_id: object,
    tool_name: str,
    count: bool,
    defer: bool = False,
    call: CountedCall | None = None,
    before_refusal: Callable[[], object] | None = None,
) -> Iterator[None]:
    conf = operator_settings()
    rate_key = f"{user_id}:{organization_id}:{tool_name}"
    key = leases_key(user_id=user_id, organization_id=organization_id, tool_name=tool_name)
    limiter = _limiter()
    lease_id = os.urandom(16).hex()
    now_ms = _now_ms()
    deadline_ms = now_ms + conf.tool_lease_seconds * 1000
    client = default_redis_client()
    # The backend itself, looked up once: every use of the `cache` proxy is a lookup of its own.
    store: BaseCache = caches[DEFAULT_CACHE_ALIAS]
    counted: WindowCount | None = None
    taken = 0
    if client is not None:
        try:
            calls, ends_ms, taken = _admit_script(client)(
                keys=[store.make_key(limiter.cache_key(rate_key)), store.make_key(key)],
                args=[
                    now_ms,
                    RATE_WINDOW_SECONDS * 1000,
                    conf.tool_calls_per_minute if count else 0,
                    conf.tool_concurrency,
                    deadline_ms,
                    lease_id,
                ],
            )
            counted = WindowCount(
                count=int(calls),
                limit=conf.tool_calls_per_minute,
                seconds_left=(int(ends_ms) - now_ms) / 1000,
                ends=int(ends_ms) / 1000,
            )
        except REDIS_OUTAGES as failure:
            # Counted in this process until Redis answers again (docs/operations.md#outages).
            store, client = outage_store(ON_OUTAGE, failure, group=RATE_GROUP), None
    if client is None:
        counted = limiter.count_in(store, rate_key, now=now_ms / 1000) if count else None
        taken = (
            0
            if counted is not None and counted.exceeded
            else _take_lease_locally(store, key, lease_id, now_ms, deadline_ms, conf.tool_concurrency)
        )
    give_back = functools.partial(_give_back, store, key, lease_id, client, rate_key, counted if count else None)
    rate_limited = count and counted is not None and counted.exceeded
    if (rate_limited or int(taken) != 1) and before_refusal is not None:
        try:
            before_refusal()
        except BaseException:
            give_back(uncount=True, lease_taken=False)
            raise
    if rate_limited:
        metrics.count_limit_refusal(RATE_GROUP)
        raise RateLimited(
            f"Too many calls of {tool_name}: at most {conf.tool_calls_per_minute} per minute.",
            retry_after_seconds=counted.retry_after_seconds if counted is not None else 1,
        )
    if int(taken) != 1:
        metrics.count_limit_refusal(CONCURRENCY_LIMIT)
        raise ConcurrencyLimited(
            f"Too many simultaneous calls of {tool_name}: at most {conf.tool_concurrency} at once.",
            retry_after_seconds=1,
        )
    try:
        yield
    finally:
        releases = getattr(_request, "releases", None) if defer else None
        uncount = call is not None and call.uncounted
        if releases is None:
            give_back(uncount=uncount)
        else:
            releases.append(functools.partial(give_back, uncount=uncount))


def _take_lease_locally(store: BaseCache, key: str, lease_id: str, now_ms: int, deadline_ms: int, slots: int) -> int:
    with _LOCAL_LEASES_LOCK:
        leases = {held: deadline for held, deadline in (store.get(key) or {}).items() if deadline > now_ms}
        if len(leases) >= slots:
            return -1
        leases[lease_id] = deadline_ms
        store.set(key, leases, timeout=max(1, math.ceil((deadline_ms - now_ms) / 1000)))
    return 1


def _give_back(
    store: BaseCache,
    key: str,
    lease_id: str,
    client: redis.Redis | None,
    rate_key: str,
    counted: WindowCount | None,
    *,
    uncount: bool,
    lease_taken: bool = True,
) -> None:
    """Give the lease back (when one was taken) and, with `uncount`, the call's count too."""
    uncount = uncount and counted is not None
    if client is not None:
        try:
            if uncount and counted is not None:
                _uncount_script(client)(
                    keys=[store.make_key(_limiter().cache_key(rate_key)), store.make_key(key)],
                    args=[round(counted.ends * 1000), lease_id if lease_taken else ""],
                )
            elif lease_taken:
                client.zrem(store.make_key(key), lease_id)
        except REDIS_OUTAGES:
            # The call itself was answered; its lease lapses at its deadline instead, its count with its window.
            logger.warning("redis unavailable: a lease of %s lapses at its deadline", RATE_GROUP)
        return
    if uncount and counted is not None:
        _limiter().uncount_in(store, rate_key, counted)
    if not lease_taken:
        return
    with _LOCAL_LEASES_LOCK:
        leases = store.get(key) or {}
        if leases.pop(lease_id, None) is not None:
            store.set(key, leases, timeout=max(1, operator_settings().tool_lease_seconds))


def _now_ms() -> int:
    return math.floor(rate_limits.clock() * 1000)
