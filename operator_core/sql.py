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
a CTE of that read, written only when the call succeeds, so both take one round
trip and commit together; elsewhere it is not sent, and its owner runs it on
its own (docs/development/performance.md#a-tool-call-in-one-statement).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

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

    `statement` builds it when it is sent: an `INSERT ... SELECT` with `%s`
    placeholders and no WHERE clause of its own (the read adds one: the call
    succeeded), and its parameters adapted for `db`. `written` tells its owner
    whether it went and wrote its row.
    """

    statement: Callable[[BaseDatabaseWrapper], tuple[str, list[object]]]
    written: bool = False


@dataclass(frozen=True)
class SucceedsIf:
    """How a settling read that the call may still fail after tells success: `fetch(..., settles_call=SucceedsIf(...))`.

    The call succeeds exactly when some row of the read meets `condition`: SQL
    over the read's columns, named `reading.<column>`, with `%s` placeholders
    bound to `params`. It must say what the code that answers the call decides
    from the same rows.
    """

    condition: str
    params: tuple[object, ...] = ()


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
    """On PostgreSQL, send `rider` as a CTE of the block's first read that settles the call (`fetch`), if any.

    PostgreSQL runs a data-modifying CTE exactly once, whether the read uses it
    or not, in the read's own transaction; the rider writes its row when the
    call succeeds (and its guard, if any, grants). SQLite has no data-modifying
    CTE: the rider is never sent there, and `rider.written` stays False.
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
    settles_call: bool | SucceedsIf = False,
) -> list[tuple]:
    """Run one SELECT and return its rows; with `fields`, column i converted as the ORM converts `fields[i]`.

    `params` bind `%s` placeholders in order, or `%(name)s` placeholders by name.
    `settles_call`: this read settles the tool call it serves (its last), so
    the call's record may go with it. True: the call succeeds whatever rows it
    returns (no error can follow it); `SucceedsIf`: it succeeds exactly when
    a row meets that condition, and the record is written only then.
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
    rider = _rider.get() if settles_call is not False and db.vendor == "postgresql" else None
    if guard is not None and db.vendor != "postgresql":
        guard_sql, guard_params = guard.statement()
        with _cursor(db) as cursor:
            cursor.execute(guard_sql, guard_params)  # type: ignore[arg-type]
            guard.settle(cursor.fetchone())
        guard = None
    if rider is not None or guard is not None:
        success = settles_call if isinstance(settles_call, SucceedsIf) else None
        sql, params = _with_guard_and_rider(db, guard, rider, success, sql, params)
    with _cursor(db) as cursor:
        # django-stubs admits a fixed list of Python types; ours are already adapted by the backend.
        cursor.execute(sql, params)  # type: ignore[arg-type]
        rows = cursor.fetchall()
    if rider is not None or guard is not None:
        # Each row: the guard's columns, whether the rider wrote its row, the read's columns,
        # the read's position (None: no row read).
        width = len(guard.columns) if guard is not None else 0
        first = rows[0] if rows else None
        if rider is not None:
            rider.written = bool(first and first[width])
            _rider.set(None)
            width += 1
        if guard is not None:
            guard.settle(first[: len(guard.columns)] if first else None)
        rows = [row[width:-1] for row in rows if row[-1] is not None]
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
    success: SucceedsIf | None,
    sql: str,
    params: Sequence[object] | Mapping[str, object],
) -> tuple[str, Sequence[object] | Mapping[str, object]]:
    """The read `sql` as the CTE `reading` of one statement with the guard and the rider (PostgreSQL),
    and the parameters of all:

        WITH guard(<columns>) AS (<the guard's SELECT>),                   -- with a guard
             reading AS (<sql>),
             settled AS (SELECT <guard grants> AND <call succeeds> AS written),  -- with a rider
             rider AS (<the rider's INSERT ... SELECT> WHERE (SELECT written FROM settled))
        SELECT guard.*, settled.written, page.*
        FROM guard CROSS JOIN settled
        LEFT JOIN (SELECT reading.*, row_number() OVER () AS read_position FROM reading) AS page ON <guard grants>
        ORDER BY page.read_position

    Every row starts with the guard's columns and whether the rider wrote its
    row, and ends with the read's position; a refused or empty read is one row
    with no position. The rider is written only when the guard grants and, with
    `success`, a row of the read meets its condition.
    """
    pieces: list[tuple[str, Sequence[object] | Mapping[str, object]]] = []
    granted, heads, sources = "TRUE", [], []
    if guard is not None:
        guard_sql, guard_params = guard.statement()
        pieces.append((f"guard({', '.join(guard.columns)}) AS ({guard_sql})", guard_params))
        granted = guard.granted
        heads.append("guard.*")
        sources.append("guard")
    pieces.append((f"reading AS ({sql.strip()})", params))
    if rider is not None:
        # Only the callers' own SQL is interpolated here (S608); values are bound.
        conditions = [f"EXISTS (SELECT 1 FROM guard WHERE {granted})"] if guard is not None else []  # noqa: S608
        if success is not None:
            conditions.append(f"EXISTS (SELECT 1 FROM reading WHERE {success.condition})")  # noqa: S608
        written = " AND ".join(conditions) or "TRUE"
        pieces.append((f"settled AS (SELECT {written} AS written)", list(success.params) if success else []))
        rider_sql, rider_params = rider.statement(db)
        pieces.append((f"rider AS ({rider_sql} WHERE (SELECT written FROM settled))", rider_params))  # noqa: S608
        heads.append("settled.written")
        sources.append("settled")
    body = (
        f"SELECT {', '.join(heads)}, page.* FROM {' CROSS JOIN '.join(sources)} LEFT JOIN ("  # noqa: S608 (bound values)
        "SELECT reading.*, row_number() OVER () AS read_position FROM reading"
        f") AS page ON ({granted}) ORDER BY page.read_position"
    )
    if not isinstance(params, Mapping):
        return f"WITH {', '.join(text for text, _ in pieces)} {body}", [
            value for _, values in pieces for value in cast(Sequence[object], values)
        ]
    # A read bound by name: the other pieces' placeholders are named too, in a name space of their own.
    bound: dict[str, object] = dict(params)
    texts, numbers = [], itertools.count()
    for text, values in pieces:
        if values is params:
            texts.append(text)
            continue
        fragments = text.split("%s")
        names = [f"piece_{next(numbers)}" for _ in fragments[1:]]
        texts.append(
            fragments[0] + "".join(f"%({name})s{rest}" for name, rest in zip(names, fragments[1:], strict=True))
        )
        bound.update(zip(names, cast(Sequence[object], values), strict=True))
    return f"WITH {', '.join(texts)} {body}", bound


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
