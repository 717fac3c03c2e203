"""Latency and throughput of operator tool calls through the whole stack, in one process.

Each call goes through the Django test client, the transport, bearer
verification, admission (membership re-check, selectors, rate and concurrency
counters in the configured cache) and the tool, against a throw-away test
database seeded with realistic data. Prints p50/p95/max latency and calls per
second for each tool.

    OPERATOR_BASE_URL=http://testserver .venv/bin/python bench/tool_calls.py [--calls 300] [--tool NAME]

Set DATABASE_URL (PostgreSQL) and REDIS_URL to measure the production setup;
the defaults measure in-memory SQLite and the local-memory cache. The rate
limit is lifted for the run, but the counters are still incremented.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from knowledge.models import SourceKind  # noqa: E402
from knowledge.services import create_module, create_source  # noqa: E402
from oauth.tokens import issue_access_token  # noqa: E402
from operator_core.scopes import SCOPE_OPERATOR_READ  # noqa: E402
from organizations.models import Role  # noqa: E402
from organizations.services import add_membership, create_organization  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
WORDS = [
    "helmet",
    "forklift",
    "ladder",
    "inspection",
    "training",
    "badge",
    "shift",
    "evacuation",
    "chemical",
    "storage",
]


def seed(*, modules: int, sources: int) -> dict[str, object]:
    organization = create_organization(slug="bench", name="Bench")
    user = get_user_model().objects.create_user(username="bench@example.test", email="bench@example.test")
    add_membership(user=user, organization=organization, role=Role.MEMBER)
    made_sources = []
    for number in range(sources):
        paragraphs = [
            " ".join(f"{WORDS[(number + p + w) % len(WORDS)]} rule {p}-{w}." for w in range(60)) for p in range(8)
        ]
        made_sources.append(
            create_source(
                organization=organization,
                title=f"Handbook {number}",
                kind=SourceKind.FILE,
                origin=f"handbook-{number}.pdf",
                text="\n\n".join(paragraphs),
            )
        )
    first_module = None
    for number in range(modules):
        module = create_module(
            organization=organization,
            title=f"Module {number} on {WORDS[number % len(WORDS)]}",
            summary="A module used to measure tool calls.",
            status="published",
            sections=[(f"Section {s}", "Body " * 50) for s in range(6)],
            sources=made_sources[number % sources : number % sources + 3],
        )
        first_module = first_module or module
    token = issue_access_token(
        user_id=user.pk,
        organization_id=str(organization.pk),
        client_id="bench",
        scopes=[SCOPE_OPERATOR_READ],
        expires_in=3600,
    )
    return {"token": token, "module_id": str(first_module.id), "source_id": str(made_sources[0].id)}


def measure(client: Client, token: str, name: str, arguments: dict[str, object], calls: int) -> list[float]:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
    )
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        response = client.post("/api/mcp/operator", data=body, content_type="application/json", headers=headers)
        timings.append(time.perf_counter() - started)
        result = response.json()["result"]
        if result.get("isError") or result["structuredContent"].get("success") is False:
            raise SystemExit(f"{name} failed: {result['content'][0]['text']}")
    return timings


def profile(client: Client, token: str, name: str, arguments: dict[str, object], calls: int) -> None:
    """Where one call's time goes: the functions with the most own time, over `calls` calls."""
    profiler = cProfile.Profile()
    profiler.enable()
    measure(client, token, name, arguments, calls)
    profiler.disable()
    print(f"== {name}: {calls} calls")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per tool (default 300)")
    parser.add_argument("--tool", help="only this tool")
    parser.add_argument("--modules", type=int, default=200)
    parser.add_argument("--sources", type=int, default=50)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the calls instead of timings")
    options = parser.parse_args()

    setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        data = seed(modules=options.modules, sources=options.sources)
        plans = {
            "list_modules": {"limit": 25},
            "get_module": {"moduleId": data["module_id"]},
            "list_sources": {"limit": 25},
            "search_knowledge": {"query": "forklift inspection", "limit": 10},
            "fetch_knowledge": {"sourceId": data["source_id"], "maxChunks": 10},
        }
        unlimited = {**settings.OPERATOR, "tool_calls_per_minute": 10**9}
        client = Client()
        print(f"database={connection.vendor} cache={settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]}")
        print(f"{'tool':<18}{'calls':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'calls/s':>9}")
        with override_settings(OPERATOR=unlimited):
            for name, arguments in plans.items():
                if options.tool and name != options.tool:
                    continue
                measure(client, data["token"], name, arguments, 5)  # warm caches and connections
                if options.profile:
                    profile(client, data["token"], name, arguments, options.calls)
                    continue
                timings = sorted(measure(client, data["token"], name, arguments, options.calls))
                p50 = statistics.median(timings) * 1000
                p95 = timings[int(len(timings) * 0.95) - 1] * 1000
                rate = len(timings) / sum(timings)
                print(f"{name:<18}{len(timings):>7}{p50:>9.2f}{p95:>9.2f}{timings[-1] * 1000:>9.2f}{rate:>9.0f}")
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)


if __name__ == "__main__":
    main()
