"""The database and the cache: SQLite and local memory by default, PostgreSQL and Redis in production."""

import os
from typing import Any

import dj_database_url
from redis.backoff import NoBackoff
from redis.retry import Retry

from operator_site.settings import env
from operator_site.settings.origin import VAR_DIR

DATABASES = {
    "default": dj_database_url.parse(
        env.env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'operator.sqlite3'}"),
        conn_max_age=env.env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
# The password, when kept out of DATABASE_URL: DATABASE_PASSWORD, or a file named by DATABASE_PASSWORD_FILE.
DATABASE_PASSWORD = env.env_optional_secret("DATABASE_PASSWORD", path_name="DATABASE_PASSWORD_FILE")
if DATABASE_PASSWORD.value:
    DATABASES["default"]["PASSWORD"] = DATABASE_PASSWORD.value
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Connections persist like PostgreSQL's (DATABASE_CONN_MAX_AGE): opening one and
    # setting it up cost more than the whole query of a tool call. Between
    # requests a connection is in autocommit and holds no lock.
    # WAL lets reads proceed while a write is in flight; IMMEDIATE takes the write
    # lock when a transaction begins, so concurrent writers wait out the busy
    # timeout instead of failing at once with "database is locked" on upgrade.
    # synchronous=NORMAL: in WAL mode a commit then waits for no fsync (only
    # checkpoints do); the database stays consistent, and a machine crash may
    # lose the last commits. Every tool call writes its audit record, and a
    # synced commit cost more than the call (docs/development/decisions.md#audit-trail).
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
    }
    # Tests get a file database like production's, not Django's shared-cache
    # in-memory one, which answers "table is locked" at once instead of waiting
    # out the busy timeout when real threads or live servers write together.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # libpq waits for ever by default on an address that takes the connection and never
    # answers (a host gone from the network, a full backlog): each request and health read
    # would hold its worker until gunicorn's timeout killed it. A timeout in the URL's query wins.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.env_int_between("DATABASE_CONNECT_TIMEOUT", 5, minimum=1, maximum=120)
    )

# psycopg prepares a statement once a connection has run it this many times (its own default).
PREPARE_THRESHOLD = 5
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env.env_bool(
    "DATABASE_PREPARED_STATEMENTS", True
):
    # The tool calls' reads run as server-side prepared statements (operator_core/sql.py):
    # PostgreSQL then skips parsing and planning them, which cost it more than running them.
    # Only those reads and the audit trail's INSERT bind on the server; the ORM's queries never
    # prepare. A pooler in transaction mode that cannot keep prepared statements (PgBouncer
    # before 1.21, or without max_prepared_statements) needs DATABASE_PREPARED_STATEMENTS=false.
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = PREPARE_THRESHOLD

REDIS_URL = env.env_str("REDIS_URL", "")
# The password, when kept out of REDIS_URL: REDIS_PASSWORD, or a file named by REDIS_PASSWORD_FILE.
REDIS_PASSWORD = env.env_optional_secret("REDIS_PASSWORD", path_name="REDIS_PASSWORD_FILE")
if REDIS_URL:
    CACHES: dict[str, dict[str, Any]] = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Redis holds only counters: when it does not answer, fail within seconds and let
            # each limit's outage policy decide (docs/operations.md#outages), rather than hold
            # a worker thread through redis-py's default ten retries. The one retry covers a
            # pooled connection that Redis closed when it restarted.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2, "retry": Retry(NoBackoff(), 1)},
        }
    }
    if REDIS_PASSWORD.value:
        # redis-py lets a password written in the URL win over this one.
        CACHES["default"]["OPTIONS"]["password"] = REDIS_PASSWORD.value
else:
    # The embedded default serves one process, so a per-process cache is exact there.
    CACHES = {"default": {"BACKEND": "operator_core.local_cache.LocalMemoryCache"}}
