"""Count a request's network round trips: SQL statements sent and Redis commands, before and after its answer.

A statement is counted where Django's cursor wrapper runs it (`execute_wrapper`,
which every hand-written read, the ORM and the audit INSERT go through); a
Redis command where redis-py sends it (`Redis.execute_command`, which
`EVALSHA` goes through too). Nothing is replaced: every statement and command
still runs against the real servers. The answer is taken as sent when Django
closes the response (`request_finished`), as a WSGI server does once the body
is written; what runs from then on is counted in `after_answer`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import redis
from django.core.signals import request_finished
from django.db import connection

from mcp_operator import limits


@dataclass
class RoundTrips:
    before_answer: list[str] = field(default_factory=list)
    after_answer: list[str] = field(default_factory=list)
    answered: bool = False

    def note(self, trip: str) -> None:
        (self.after_answer if self.answered else self.before_answer).append(trip)

    @property
    def sql_before_answer(self) -> int:
        return sum(1 for trip in self.before_answer if trip.startswith("sql "))

    @property
    def redis_before_answer(self) -> list[str]:
        return [trip.removeprefix("redis ") for trip in self.before_answer if trip.startswith("redis ")]


@contextlib.contextmanager
def counted_round_trips() -> Iterator[RoundTrips]:
    """Count the round trips of the requests made in the block (one request: the figures are its own)."""
    trips = RoundTrips()
    send = redis.Redis.execute_command

    def redis_command(client: redis.Redis, *args: Any, **options: Any) -> Any:
        trips.note(f"redis {args[0]}")
        return send(client, *args, **options)

    def statement(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        trips.note("sql " + " ".join(sql.split()[:1]))
        return execute(sql, params, many, context)

    def mark_answered(**_: Any) -> None:
        trips.answered = True

    # The mark must run before what the limits leave for after the answer: receivers run in the order connected.
    release = getattr(limits, "release_deferred_leases", None)
    if release is not None:
        request_finished.disconnect(release)
    request_finished.connect(mark_answered, weak=False)
    if release is not None:
        request_finished.connect(release, weak=False)
    try:
        with connection.execute_wrapper(statement), mock.patch.object(redis.Redis, "execute_command", redis_command):
            yield trips
    finally:
        request_finished.disconnect(mark_answered)


def statements(*, reads: int, access_apart: bool = False) -> int:
    """A successful tool call's SQL statements: the tool's reads, the access query unless it rides on the
    first read, and the audit INSERT, which rides on the settling read (both as CTEs, on PostgreSQL only:
    operator_core.sql.guarded_by and sent_with_settling_read)."""
    on_postgresql = connection.vendor == "postgresql"
    return reads + (0 if on_postgresql and not access_apart else 1) + (0 if on_postgresql else 1)
