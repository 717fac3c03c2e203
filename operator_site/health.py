"""`GET /healthz`, `GET /readyz` and `GET /healthz/dependencies`, answered before any other middleware.

- `/healthz`: the process is alive; no I/O at all.
- `/readyz`, for the load balancer: can this process serve? It is 503 until the
  process has once reached its database, loaded its keys and seen every
  migration applied, and 200 from then on. An outage of a dependency that every
  server shares (PostgreSQL, Redis) does not take it out: each request then gets
  the documented answer of docs/operations.md#outages, which beats the proxy's
  "no server" page (docs/development/decisions.md#readiness).
- `/healthz/dependencies`, for the operator's alerts: is every dependency
  healthy right now? 200 or 503, with each dependency up or down.

Neither names an error text, host or secret. They sit in front of the other
middleware so that a probe by IP address is not refused by the Host check, and
a probe every second costs no session, CSRF or log work. None is rate-limited.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
DEPENDENCIES_PATH = "/healthz/dependencies"

# Set once true: a process that reached its database, saw every migration applied
# and loaded its keys is ready for good; it does not look again.
_settled = {"database": False, "migrations": False, "keys": False}


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            if request.path == LIVENESS_PATH:
                return _answer({"status": "alive"}, status=200)
            if request.path == READINESS_PATH:
                failed = readiness_failures()
                if failed:
                    return _answer({"status": "unavailable", "failed": failed}, status=503)
                return _answer({"status": "ready"}, status=200)
            if request.path == DEPENDENCIES_PATH:
                states = dependency_states()
                healthy = all(state != "down" for state in states.values())
                return _answer(
                    {"status": "healthy" if healthy else "degraded", "dependencies": states},
                    status=200 if healthy else 503,
                )
        return self.get_response(request)


def readiness_failures() -> list[str]:
    """What keeps this process from serving, in a fixed order; empty once it has settled."""
    failed = []
    if not _settled["database"]:
        if _database_answers():
            _settled["database"] = True
        else:
            failed.append("database")
    if not _keys_ready():
        failed.append("keys")
    if "database" not in failed and not _migrated():
        failed.append("migrations")  # nothing to ask a database that does not answer
    return failed


def dependency_states() -> dict[str, str]:
    """Each shared dependency, "up" or "down" now; Redis is "not configured" on the embedded default."""
    return {
        "database": "up" if _database_answers() else "down",
        "redis": _redis_state(),
    }


def _database_answers() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        logger.warning("health: the database does not answer", exc_info=True)
        connection.close()  # the next probe starts from a fresh connection
        return False
    return True


def _redis_state() -> str:
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        return "not configured"  # the embedded default: one process, its own memory
    try:
        cache._cache.get_client(write=True).ping()
    except (redis.RedisError, OSError):
        logger.warning("health: Redis does not answer", exc_info=True)
        return "down"
    return "up"


def _keys_ready() -> bool:
    if _settled["keys"]:
        return True
    try:
        for pem in (settings.OPERATOR_SIGNING_KEY, settings.OPERATOR_LTI_PRIVATE_KEY):
            load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError):
        return False
    _settled["keys"] = True
    return True


def _migrated() -> bool:
    if _settled["migrations"]:
        return True
    try:
        executor = MigrationExecutor(connection)
        unapplied = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        return False
    _settled["migrations"] = not unapplied
    return not unapplied


def _answer(payload: dict[str, object], *, status: int) -> HttpResponse:
    response = JsonResponse(payload, status=status)
    response["Cache-Control"] = "no-store"
    return response
