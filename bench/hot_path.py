"""Where one MCP request's time goes, in one process, through Django's real WSGI handler.

Seeds the demo data into a throw-away test database, then sends the same
requests `compare.sh` sends (tools/list, list_modules, search_knowledge), and a
call of each other tool, through
`WSGIHandler` directly, so the figures hold the server's own work and nothing of
an HTTP client. Prints microseconds per request (wall clock, and this process's
CPU, which a busy machine disturbs less) and database queries per request; with
`--profile`, the functions with the most own time. "db cpu us" is the PostgreSQL
backend's CPU, when it runs on this machine: a server's CPU that compare.sh does
not count, though it competes for the same cores.

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


def database_cpu_seconds() -> float | None:
    """CPU time of this connection's PostgreSQL backend so far, when it runs on this machine; else None."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


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
    # One connection for the whole run, never recycled: its backend's CPU is the database's share.
    connection.settings_dict["CONN_MAX_AGE"] = None
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
        print(f"{'request':<18}{'calls':>7}{'us/call':>10}{'cpu us':>9}{'db cpu us':>10}{'queries':>9}")
        with for_measuring():
            for name, (method, tool, arguments) in requests_for(organization).items():
                template = environ_for(method, tool, arguments, token)
                for _ in range(50):
                    send(handler, template)
                with CaptureQueriesContext(connection) as captured:
                    send(handler, template)
                queries = len(captured.captured_queries)
                profiler = cProfile.Profile() if options.profile else None
                database_started = database_cpu_seconds()
                started, cpu_started = time.perf_counter(), time.process_time()
                if profiler:
                    profiler.enable()
                for _ in range(options.calls):
                    send(handler, template)
                if profiler:
                    profiler.disable()
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                per_call, cpu_per_call = elapsed / options.calls * 1e6, cpu / options.calls * 1e6
                database_ended = database_cpu_seconds()
                database = "-"
                if database_started is not None and database_ended is not None:
                    database = f"{(database_ended - database_started) / options.calls * 1e6:.0f}"
                print(f"{name:<18}{options.calls:>7}{per_call:>10.0f}{cpu_per_call:>9.0f}{database:>10}{queries:>9}")
                if profiler:
                    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)


if __name__ == "__main__":
    main()
