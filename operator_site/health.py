"""`GET /healthz` and `GET /readyz`, answered before any other middleware (docs/deploy.md, "Health checks").

- `/healthz`: the process is alive; no I/O at all.
- `/readyz`: the database answers, Redis answers (when configured), the
  signing keys are loaded and no migration is unapplied; otherwise 503 naming
  each failed part, never an error text, host or secret.

They sit in front of the other middleware so that a load balancer probing by
IP address is not refused by the Host check, and a probe every second costs no
session, CSRF or log work. Neither is rate-limited.
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

# Set once true: a process that saw every migration applied and its keys load does not look again.
_settled = {"migrations": False, "keys": False}


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
        return self.get_response(request)


def readiness_failures() -> list[str]:
    """The names of the parts that are not ready, in a fixed order; empty when all are."""
    checks = {"database": _database_ready, "redis": _redis_ready, "keys": _keys_ready, "migrations": _migrated}
    failed = []
    for name, check in checks.items():
        if name == "migrations" and "database" in failed:
            continue  # nothing to ask a database that does not answer
        if not check():
            failed.append(name)
    return failed


def _database_ready() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        logger.warning("readiness: the database does not answer", exc_info=True)
        connection.close()  # the next probe starts from a fresh connection
        return False
    return True


def _redis_ready() -> bool:
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        return True  # the embedded default: one process, its own memory
    try:
        cache._cache.get_client(write=True).ping()
    except (redis.RedisError, OSError):
        logger.warning("readiness: Redis does not answer", exc_info=True)
        return False
    return True


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
