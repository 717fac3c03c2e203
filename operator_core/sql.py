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


@dataclass
class Guard:
    """A check that rides a tool call's first read: the person's access, on the operator endpoint.

    `statement` builds a SELECT of at most one row (its parameters adapted for
    the database), whose columns `columns` names; `granted` is an SQL condition
    over them. `settle` hears the row (None when there is none) before the read's
    rows are used, and raises to refuse the call. `settled` tells its owner
    whether a read took it.
    """

    statement: Callable[[], tuple[str, list[object]]]
    columns: tuple[str, ...]
    granted: str  # its columns named as `guard.<column>`
    settle: Callable[[Sequence[object] | None], None]
    settled: bool = False


_rider: ContextVar[Rider | None] = ContextVar("operator_core.sql.rider", default=None)
_guard: ContextVar[Guard | None] = ContextVar("operator_core.sql.guard", default=None)


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


@contextlib.contextmanager
def guarded_by(guard: Guard) -> Iterator[None]:
    """Settle `guard` with the block's first `fetch`, before that read's rows are used.

    On PostgreSQL the guard is a CTE of the read, which returns its rows only when
    the guard grants them (and a rider sent with it is written only then): one
    statement. On SQLite the guard is run alone just before the read, in the same
    function. A block that reads nothing leaves the guard unsettled.
    """
    token = _guard.set(guard)
    try:
        yield
    finally:
        _guard.reset(token)


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
    guard = _guard.get()
    if guard is not None:
        _guard.set(None)  # taken by this read, whatever comes of it
        if guard.settled:
            guard = None
        else:
            guard.settled = True
    rider = _rider.get() if settles_call and db.vendor == "postgresql" else None
    if guard is not None and db.vendor != "postgresql":
        guard_sql, guard_params = guard.statement()
        with _cursor(db) as cursor:
            cursor.execute(guard_sql, guard_params)  # type: ignore[arg-type]
            guard.settle(cursor.fetchone())
        guard = None
    if rider is not None or guard is not None:
        sql, params = _with_guard_and_rider(db, guard, rider, sql, params)
    with _cursor(db) as cursor:
        # django-stubs admits a fixed list of Python types; ours are already adapted by the backend.
        cursor.execute(sql, params)  # type: ignore[arg-type]
        rows = cursor.fetchall()
    if guard is not None:
        # Each row: the guard's columns, the read's, the read's position (None: no row read).
        width = len(guard.columns)
        guard.settle(rows[0][:width] if rows else None)
        rows = [row[width:-1] for row in rows if row[-1] is not None]
    if rider is not None:
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


def _with_guard_and_rider(
    db: BaseDatabaseWrapper,
    guard: Guard | None,
    rider: Rider | None,
    sql: str,
    params: Sequence[object] | Mapping[str, object],
) -> tuple[str, Sequence[object] | Mapping[str, object]]:
    """The read `sql` with the guard and the rider as its CTEs (PostgreSQL), and the parameters of all.

    With a guard, the read becomes a subquery joined to the guard's one row only
    when it grants: every row starts with the guard's columns and ends with the
    read's position, and a refused or empty read is one row with no position.
    The rider is then written only when the guard grants.
    """
    ctes: list[tuple[str, list[object]]] = []
    if guard is not None:
        guard_sql, guard_params = guard.statement()
        ctes.append((f"guard({', '.join(guard.columns)}) AS ({guard_sql})", guard_params))
    if rider is not None:
        rider_sql, rider_params = rider.statement(db)
        if guard is not None:
            # INSERT ... SELECT, so that it can be conditioned on the guard's grant.
            if " VALUES (" in rider_sql:
                rider_sql = rider_sql.replace(" VALUES (", " SELECT ", 1).rstrip()[:-1]
            rider_sql += f" WHERE EXISTS (SELECT 1 FROM guard WHERE {guard.granted})"  # noqa: S608 (the guard's own SQL)
        ctes.append((f"rider AS ({rider_sql})", rider_params))
    body = sql.lstrip()
    if guard is not None:
        body = (
            "SELECT guard.*, page.* FROM guard LEFT JOIN ("  # noqa: S608 (the caller's read; values are bound)
            f"SELECT reading.*, row_number() OVER () AS read_position FROM ({body}) AS reading"
            f") AS page ON ({guard.granted}) ORDER BY page.read_position"
        )
    cte_sql = ", ".join(cte for cte, _ in ctes)
    if isinstance(params, Mapping):
        # A read bound by name: the CTEs' placeholders are named too, in a name space of their own.
        named: dict[str, object] = {}
        pieces = cte_sql.split("%s")
        names = [f"cte_{index}" for index in range(len(pieces) - 1)]
        cte_sql = pieces[0] + "".join(f"%({name})s{piece}" for name, piece in zip(names, pieces[1:], strict=True))
        named.update(zip(names, [value for _, values in ctes for value in values], strict=True))
        bound: Sequence[object] | Mapping[str, object] = {**params, **named}
    else:
        bound = [*(value for _, values in ctes for value in values), *params]
    if body[:4].upper() == "WITH":
        return f"WITH {cte_sql}, {body[4:].lstrip()}", bound
    return f"WITH {cte_sql} {body}", bound


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
