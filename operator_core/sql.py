"""Hand-written SELECTs for the hot path, adapted to the database vendor by Django's own backend.

The selectors that serve tool calls write their SQL by hand (and the audit
trail its INSERT, through `execute`); this module keeps that SQL the same on
SQLite and PostgreSQL and its answers the same as the ORM's: parameters
adapted as the ORM adapts them (`uuid_param`, `datetime_param`), the backend's
own `__icontains` (`contains_condition`, `contains_param`), columns converted
by the model fields' converters (`fetch`, `row_converter`), and statements run
through Django's cursor wrapper, on PostgreSQL one that binds on the server so
psycopg prepares them. SQL text holds `%s` (or `%(name)s`) placeholders only:
values are always bound. Why: docs/development/performance.md#the-tool-calls-reads-are-sql-written-by-hand.

`sent_with_settling_read` lets a data-modifying statement (a tool call's
audit record) ride on the read that settles the call: on PostgreSQL it becomes
a CTE of that read, so both take one round trip and commit together; elsewhere
it is not sent, and its owner runs it on its own
(docs/development/performance.md#a-tool-call-in-one-statement).
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.db.models import Field

from operator_core.telemetry.tracing import traced_cursor_class

Converter = Callable[[Any, Any, Any], Any]

# The largest integer either vendor binds (64-bit). Callers clamp integers from requests to it: a
# bound past every stored value selects the same rows, where a larger one fails to bind.
INTEGER_MAX = 2**63 - 1


def uuid_param(value: uuid.UUID) -> object:
    """A UUID as the backend stores it: native on PostgreSQL, 32 hex digits on SQLite."""
    return value if connection.features.has_native_uuid_field else value.hex


def datetime_param(value: datetime) -> object:
    """An aware datetime as the backend compares it (naive UTC text on SQLite)."""
    return connection.ops.adapt_datetimefield_value(value)


def contains_condition(column: str) -> str:
    """Text `column` contains the bound pattern, case-insensitively, exactly as the ORM's `__icontains`."""
    # Every backend defines `operators`; django-stubs types `connection` as the base class, which does not.
    return f"{connection.ops.lookup_cast('icontains') % column} {connection.operators['icontains']}"  # type: ignore[attr-defined]


def contains_param(text: str) -> str:
    """The bound pattern of `contains_condition`: `text` anywhere, its `%`, `_` and `\\` taken literally."""
    return f"%{connection.ops.prep_for_like_query(text)}%"


@dataclass
class Rider:
    """A statement that returns no rows, to be sent with a settling read (`sent_with_settling_read`).

    `statement` builds it when it is sent: SQL with `%s` placeholders, and its
    parameters adapted for `db`. `sent` tells its owner whether it went.
    """

    statement: Callable[[BaseDatabaseWrapper], tuple[str, list[object]]]
    sent: bool = False


_rider: ContextVar[Rider | None] = ContextVar("operator_core.sql.rider", default=None)


@contextlib.contextmanager
def sent_with_settling_read(rider: Rider | None) -> Iterator[None]:
    """On PostgreSQL, send `rider` as a CTE of the block's first `fetch(..., settles_call=True)`, if any.

    PostgreSQL runs a data-modifying CTE exactly once, whether the read uses it
    or not, in the read's own transaction. SQLite has no data-modifying CTE: the
    rider is never sent there, and `rider.sent` stays False.
    """
    token = _rider.set(rider)
    try:
        yield
    finally:
        _rider.reset(token)


def fetch(
    sql: str,
    params: Sequence[object] | Mapping[str, object],
    *,
    fields: Sequence[Field | None] | None = None,
    settles_call: bool = False,
) -> list[tuple]:
    """Run one SELECT and return its rows; with `fields`, column i converted as the ORM converts `fields[i]`.

    `params` bind `%s` placeholders in order, or `%(name)s` placeholders by name.
    `settles_call`: whatever rows this read returns, the tool call it serves
    succeeds (no error can follow it), so the call's record may go with it.
    """
    # The wrapper is looked up once: each `connection.x` is a thread-local lookup of its own.
    db = connections[DEFAULT_DB_ALIAS]
    rider = _rider.get() if settles_call else None
    if rider is not None and db.vendor == "postgresql":
        sql, params = _with_rider(rider.statement(db), sql, params)
    with _cursor(db) as cursor:
        # django-stubs admits a fixed list of Python types; ours are already adapted by the backend.
        cursor.execute(sql, params)  # type: ignore[arg-type]
        rows = cursor.fetchall()
    if rider is not None and db.vendor == "postgresql":
        rider.sent = True
        _rider.set(None)
    if fields is None or not rows:
        return rows
    convert = _converter(db, tuple(fields))
    return [convert(row) for row in rows]


def execute(sql: str, params: Sequence[object]) -> None:
    """Run one statement that returns no rows, bound like `fetch`'s reads: prepared on PostgreSQL."""
    with _cursor(connections[DEFAULT_DB_ALIAS]) as cursor:
        # django-stubs admits a fixed list of Python types; ours are already adapted by the backend.
        cursor.execute(sql, params)  # type: ignore[arg-type]


def _with_rider(
    rider: tuple[str, list[object]], sql: str, params: Sequence[object] | Mapping[str, object]
) -> tuple[str, Sequence[object] | Mapping[str, object]]:
    """The read `sql` with the rider as its first CTE, and the parameters of both."""
    rider_sql, rider_params = rider
    if isinstance(params, Mapping):
        # A read bound by name: the rider's placeholders are named too, in a name space of their own.
        names = [f"rider_{index}" for index in range(len(rider_params))]
        pieces = rider_sql.split("%s")
        rider_sql = pieces[0] + "".join(f"%({name})s{piece}" for name, piece in zip(names, pieces[1:], strict=True))
        bound: Sequence[object] | Mapping[str, object] = {**params, **dict(zip(names, rider_params, strict=True))}
    else:
        bound = [*rider_params, *params]
    body = sql.lstrip()
    if body[:4].upper() == "WITH":
        return f"WITH rider AS ({rider_sql}), {body[4:].lstrip()}", bound
    return f"WITH rider AS ({rider_sql}) {body}", bound


def _cursor(db: BaseDatabaseWrapper) -> CursorWrapper:
    """Django's cursor; on PostgreSQL with prepared statements on, one that binds on the server.

    That cursor is Django's own server-binding class on the same psycopg
    connection, so it shares the adapters Django set up when it connected
    (time zone included), and it is wrapped as `connection.cursor()` wraps one.
    """
    if db.vendor != "postgresql":
        return db.cursor()
    db.ensure_connection()
    if db.connection.prepare_threshold is None:
        return db.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor  # psycopg is there: PostgreSQL runs

    db.validate_thread_sharing()
    with db.wrap_database_errors:
        # The class, traced when tracing is on: built here, it misses the instrumented cursor factory.
        cursor = traced_cursor_class(ServerBindingCursor)(db.connection)
    # Counted and logged like connection.cursor()'s (assertNumQueries forces the debug wrapper).
    return db.make_debug_cursor(cursor) if db.queries_logged else db.make_cursor(cursor)


def row_converter(fields: Sequence[Field | None]) -> Callable[[Sequence[Any]], tuple]:
    """A function that converts one result row as the ORM converts column i for `fields[i]`.

    None in `fields` keeps the column as the driver returned it (counts, lengths,
    text). Where the backend converts nothing (PostgreSQL), rows pass as they are.
    """
    return _converter(connections[DEFAULT_DB_ALIAS], tuple(fields))


# Built once per (connection wrapper, columns): finding a field's converters costs more than
# converting a row. Each thread has its own wrapper, and a process has few threads and reads.
@functools.lru_cache(maxsize=128)
def _converter(db: BaseDatabaseWrapper, fields: tuple[Field | None, ...]) -> Callable[[Sequence[Any]], tuple]:
    converters = []
    for index, field in enumerate(fields):
        if field is None:
            continue
        column = field.cached_col
        for convert in [*db.ops.get_db_converters(column), *field.get_db_converters(db)]:
            converters.append((index, column, convert))
    if not converters:
        return tuple

    def converted(row: Sequence[Any]) -> tuple:
        values = list(row)
        for index, column, convert in converters:
            values[index] = convert(values[index], column, db)
        return tuple(values)

    return converted
