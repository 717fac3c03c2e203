"""Where one MCP request's time goes, in one process, through Django's real WSGI handler.

Seeds the demo data into a throw-away test database, then sends the same
requests `compare.sh` sends (tools/list, list_modules, search_knowledge), and a
call of each other tool, through
`WSGIHandler` directly, so the figures hold the server's own work and nothing of
an HTTP client. Prints microseconds per request (wall clock, and this process's
CPU, which a busy machine disturbs less) and database queries per request; with
`--profile`, the functions with the most own time.

The CPU is split into its parts, then summed: "app" is this process's, "pg" the
PostgreSQL backend's that serves this process's one connection (read from /proc,
so only when the server runs on this machine), "redis" the Redis server's, read
from its `INFO cpu` (used_cpu_user + used_cpu_sys). That last one is the WHOLE
Redis server's CPU, every client's and every database number's: run the bench
against a Redis that nothing else uses, or the column counts their work too.
compare.sh counts none of the servers' CPU, though it competes for the same cores.

    OPERATOR_BASE_URL=http://testserver .venv/bin/python bench/hot_path.py [--calls 2000] [--profile]

Set DATABASE_URL and REDIS_URL to profile the production setup.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

import django

django.setup()

import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.handlers.wsgi import WSGIHandler  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings, setup_test_environment  # noqa: E402

from knowledge.models import Module, Source, SourceStatus  # noqa: E402
from oauth.tokens import issue_access_token  # noqa: E402
from operator_core.scopes import SCOPE_OPERATOR_READ  # noqa: E402
from organizations.models import Organization  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "hot-path-bench", "version": "1.0.0"},
}


def requests_for(organization: Organization) -> dict[str, tuple[str, str | None, dict[str, object] | None]]:
    """The three requests compare.sh sends, then the other three tools on the demo's rows."""
    module = Module.objects.filter(organization=organization).order_by("title").first()
    source = Source.objects.filter(organization=organization, status=SourceStatus.PROCESSED).order_by("title").first()
    return {
        "tools/list": ("tools/list", None, None),
        "list_modules": ("tools/call", "list_modules", {}),
        "search_knowledge": ("tools/call", "search_knowledge", {"query": "security policy"}),
        "get_module": ("tools/call", "get_module", {"moduleId": str(module.pk)}),
        "list_sources": ("tools/call", "list_sources", {}),
        "fetch_knowledge": ("tools/call", "fetch_knowledge", {"sourceId": str(source.pk)}),
    }


def environ_for(method: str, tool: str | None, arguments: dict[str, object] | None, token: str) -> dict[str, object]:
    params: dict[str, object] = {"_meta": META}
    if tool is not None:
        params = {"name": tool, "arguments": arguments, **params}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/mcp/operator",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_ACCEPT": "application/json, text/event-stream",
        "HTTP_MCP_PROTOCOL_VERSION": "2026-07-28",
        "HTTP_MCP_METHOD": method,
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.input": None,
        "wsgi.url_scheme": "http",
        "_body": body,
    }
    if tool is not None:
        environ["HTTP_MCP_NAME"] = tool
    return environ


def backend_pid() -> int | None:
    """The pid of this connection's PostgreSQL backend; None on another database."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    return int(pid)


def backend_cpu_seconds(pid: int | None) -> float | None:
    """CPU time of PostgreSQL backend `pid` so far, when it runs on this machine; else None.

    The pid is read once per run and checked at its end (`same_backend`): a
    reconnect starts a new backend, whose CPU starts again from zero, and a
    figure read across one came out negative.
    """
    if pid is None:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def same_backend(pid: int | None) -> None:
    """Stop the run when this connection's backend changed since `pid` was read: its CPU would be wrong."""
    if pid is not None and backend_pid() != pid:
        raise SystemExit("the PostgreSQL connection was reopened during a measurement; its CPU cannot be read")


def redis_client() -> redis.Redis | None:
    """A client of the Redis server the cache uses (REDIS_URL), or None without one."""
    url = os.environ.get("REDIS_URL")
    return redis.Redis.from_url(url) if url else None


def redis_cpu_seconds(client: redis.Redis | None) -> float | None:
    """The whole Redis server's CPU so far (every client's, not this process's alone); None without Redis."""
    if client is None:
        return None
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def per_call(started: float | None, ended: float | None, calls: int) -> float | None:
    """Microseconds per call between two CPU readings in seconds; None when either is missing."""
    if started is None or ended is None:
        return None
    return (ended - started) / calls * 1e6


def cell(value: float | None, width: int) -> str:
    return f"{value:>{width}.0f}" if value is not None else f"{'-':>{width}}"


def seeded_token() -> tuple[Organization, str]:
    """The demo data seeded into the database, and a read token of Bob's at Acme for the whole run."""
    call_command("seed_demo", verbosity=0)
    user = get_user_model().objects.get(email="bob@acme.test")
    organization = Organization.objects.get(slug="acme")
    token = issue_access_token(
        user_id=user.pk,
        organization_id=str(organization.pk),
        client_id="bench",
        scopes=[SCOPE_OPERATOR_READ],
        expires_in=7200,
    )
    return organization, token


def for_measuring() -> override_settings:
    """Settings under which only the server's work is measured: the tool-call limits out of the way."""
    # One connection for the whole run, never recycled: its backend's CPU is the database's share. The
    # connection is open already (the seeding), and its closing time was set then from CONN_MAX_AGE (60 s):
    # left there, the first request after it reopened the connection mid-run, on a new backend.
    connection.settings_dict["CONN_MAX_AGE"] = None
    connection.close_at = None
    return override_settings(OPERATOR={**settings.OPERATOR, "tool_calls_per_minute": 10**9, "tool_concurrency": 10**6})


def send(handler: WSGIHandler, template: dict[str, object]) -> bytes:
    environ = dict(template)
    environ["wsgi.input"] = io.BytesIO(environ.pop("_body"))  # type: ignore[arg-type]
    status: list[str] = []
    response = handler(environ, lambda code, headers: status.append(code))
    body = b"".join(response)
    response.close()  # as a WSGI server does once the body is sent: the limits give the lease back then
    if not status[0].startswith("200"):
        raise SystemExit(f"{status[0]}: {body[:300]!r}")
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()

    setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        organization, token = seeded_token()
        handler = WSGIHandler()
        print(f"database={connection.vendor} cache={settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]}")
        print(
            f"{'request':<18}{'calls':>7}{'us/call':>10}{'app cpu':>9}{'pg cpu':>8}{'redis cpu':>10}{'cpu sum':>9}"
            f"{'queries':>9}"
        )
        with for_measuring():
            redis_server = redis_client()
            for name, (method, tool, arguments) in requests_for(organization).items():
                template = environ_for(method, tool, arguments, token)
                for _ in range(50):
                    send(handler, template)
                with CaptureQueriesContext(connection) as captured:
                    send(handler, template)
                queries = len(captured.captured_queries)
                profiler = cProfile.Profile() if options.profile else None
                pid = backend_pid()
                pg_started, redis_started = backend_cpu_seconds(pid), redis_cpu_seconds(redis_server)
                started, cpu_started = time.perf_counter(), time.process_time()
                if profiler:
                    profiler.enable()
                for _ in range(options.calls):
                    send(handler, template)
                if profiler:
                    profiler.disable()
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                pg_ended, redis_ended = backend_cpu_seconds(pid), redis_cpu_seconds(redis_server)
                same_backend(pid)
                parts = [
                    cpu / options.calls * 1e6,
                    per_call(pg_started, pg_ended, options.calls),
                    per_call(redis_started, redis_ended, options.calls),
                ]
                total = sum(part for part in parts if part is not None)
                print(
                    f"{name:<18}{options.calls:>7}{elapsed / options.calls * 1e6:>10.0f}{cell(parts[0], 9)}"
                    f"{cell(parts[1], 8)}{cell(parts[2], 10)}{total:>9.0f}{queries:>9}"
                )
                if profiler:
                    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)


if __name__ == "__main__":
    main()
