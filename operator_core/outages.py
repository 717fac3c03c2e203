"""What an edge answers for an exception that is not an `OperatorError` (docs/operations.md#outages).

Every edge catches once and calls `error_for_failure`. A database or Redis
outage, which clears by itself (`OperationalError`, `InterfaceError`, Redis not
answering), is `TemporarilyUnavailable` with `Retry-After`, and a broken
database connection is closed on the spot so the next request opens a fresh
one. Anything else is a bug, integrity and data errors included: logged with
its trace, answered `internal_error`. The edges:
docs/development/architecture.md#errors.
"""

from __future__ import annotations

import logging

import redis
from django.db import InterfaceError, OperationalError, connections

from operator_core.errors import OperatorError, TemporarilyUnavailable

# redis-py's own classes: they do not derive from the built-in ConnectionError and TimeoutError.
REDIS_OUTAGES: tuple[type[Exception], ...] = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
DATABASE_OUTAGES: tuple[type[Exception], ...] = (OperationalError, InterfaceError)


def is_outage(failure: BaseException) -> bool:
    """True for a failure of the database or Redis that a retry a few seconds later may not meet."""
    return isinstance(failure, REDIS_OUTAGES + DATABASE_OUTAGES)


def error_for_failure(failure: Exception, *, logger: logging.Logger, context: str, message: str) -> OperatorError:
    """The error to answer for `failure`, logged once; `message` is the internal error's wording.

    Never puts the exception's text into the answer: a database message may
    quote SQL or parameters.
    """
    if isinstance(failure, OperatorError):
        return failure
    if is_outage(failure):
        # A warning, not a trace per request: an outage fails every request alike.
        logger.warning("%s: %s unavailable (%s)", context, _part(failure), type(failure).__name__)
        close_broken_connections()
        return TemporarilyUnavailable()
    logger.error("%s failed", context, exc_info=failure)
    return OperatorError(message)


def close_broken_connections() -> None:
    """Close every database connection of this thread that failed and no longer answers.

    Django does the same when a request ends (`close_old_connections`); doing it
    here also covers work outside a request (the email worker). A connection
    inside a transaction is left alone: its owner is still unwinding it.
    """
    for connection in connections.all(initialized_only=True):
        if connection.errors_occurred and not connection.in_atomic_block and not connection.is_usable():
            connection.close()


def _part(failure: BaseException) -> str:
    return "redis" if isinstance(failure, REDIS_OUTAGES) else "database"
