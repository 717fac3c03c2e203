"""Latency of an organization's usage and connections pages at 1,000,000 audit rows, with and without the roll-up.

    OPERATOR_BASE_URL=http://testserver DATABASE_URL=postgres://... \
        .venv/bin/python bench/usage_page.py [--rows 1000000] [--requests 40] [--keep]

Fills `--rows` audit events into one organization over the last 90 days (and
a tenth as many into nine others), then times `GET /organizations/<slug>/usage/`
through the Django test client and the whole stack (session, the admin
check, the reads, the template) for 30 and 90 days, in three states:

- **events only**: no roll-up; every figure counted from the events on the
  (organization, occurred_at) index: what indexes alone give;
- **events, covering index**: the same with an index that also holds every
  column the count reads, so the count never visits the table;
- **roll-up**: `roll_up_usage` ran yesterday, as the daily job does, so the
  page reads the roll-up and counts the events of yesterday and today.

It prints p50/p95/max per state and span, then the connections pages once
the roll-up ran: the organization's (a live connection for every person and
client, 300 rows, each with its last tool call, its 30 days of calls and its
last failure) and one person's own (`/account/connections/`, six connections),
and how long the daily job's first and next roll-ups take. By default everything happens in a throw-away
test database; `--keep` uses the configured database (migrated first) and
leaves the rows there. PostgreSQL is what the target is set on (COPY fills
it in seconds); SQLite works, slowly, for a small --rows.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

from audit.models import AuditAction, AuditEvent, DailyUsage  # noqa: E402
from audit.services import roll_up_usage  # noqa: E402
from oauth.models import AccessToken, Application, RefreshToken  # noqa: E402
from organizations.models import Membership, Organization, Role  # noqa: E402
from tests.factories import make_user  # noqa: E402

DAYS = 90
PEOPLE = 50
CLIENTS = 6
TOOLS = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge", "get_source"]
COVERING_INDEX = "bench_audit_org_occurred_covering"
COLUMNS = (
    "occurred_at",
    "action",
    "outcome",
    "person_id",
    "organization_id",
    "client_id",
    "client_name",
    "tool",
    "duration_ms",
    "request_id",
    "detail",
)


def events(
    organization: Organization, *, count: int, people: list[int], clients: list[str], now: datetime, seed: int
) -> Iterator[tuple[object, ...]]:
    """`count` events over the last 90 days, oldest first: tool calls, 2% refused, and a refresh every 40 calls.

    Oldest first, as the service appends them: a day's rows then lie together
    in the table, as they do in production, where random order would make
    every read of a day visit a page per row.
    """
    chooser = random.Random(seed)
    span = DAYS * 86_400
    for offset in sorted((chooser.random() for _ in range(count)), reverse=True):
        at = now - timedelta(seconds=offset * span)
        person, client = chooser.choice(people), chooser.choice(clients)
        draw = chooser.random()
        if draw < 0.025:
            yield (at, AuditAction.REFRESH, "ok", person, organization.pk, client, "", "", None, "", "{}")
        elif draw < 0.027:
            yield (
                at,
                AuditAction.REFRESH,
                "invalid_grant",
                person,
                organization.pk,
                client,
                "",
                "",
                None,
                "",
                '{"reason": "role"}',
            )
        else:
            outcome = "ok" if draw < 0.98 else chooser.choice(["forbidden", "rate_limited", "concurrency_limited"])
            yield (
                at,
                AuditAction.TOOL_CALL,
                outcome,
                person,
                organization.pk,
                client,
                "",
                chooser.choice(TOOLS),
                chooser.random() * 20,
                "",
                "{}",
            )


def fill(
    organization: Organization, *, count: int, people: list[int], clients: list[str], now: datetime, seed: int
) -> None:
    rows = events(organization, count=count, people=people, clients=clients, now=now, seed=seed)
    table = AuditEvent._meta.db_table
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            raw = cursor.cursor
            with raw.copy(f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        return
    batch = []
    for row in rows:
        values = dict(zip(COLUMNS, row, strict=True))
        values["detail"] = {} if values["detail"] == "{}" else {"reason": "role"}
        batch.append(AuditEvent(**values))
        if len(batch) == 10_000:
            AuditEvent.objects.bulk_create(batch)
            batch = []
    AuditEvent.objects.bulk_create(batch)


def setting_up(rows: int, now: datetime) -> tuple[Organization, object, object]:
    started = time.perf_counter()
    big = Organization.objects.create(slug="big", name="Big")
    admin = make_user(email="admin@big.test")
    Membership.objects.create(user=admin, organization=big, role=Role.ADMIN)
    people = [make_user(email=f"person{number}@big.test").pk for number in range(PEOPLE)]
    applications = [
        Application.objects.create(
            name=f"Client {number}",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1/cb",
        )
        for number in range(CLIENTS)
    ]
    clients = [application.client_id for application in applications]
    for person in people:
        Membership.objects.create(user_id=person, organization=big, role=Role.MEMBER)
    connect_everyone(big, people=people, clients=applications, now=now)
    fill(big, count=rows, people=people, clients=clients, now=now, seed=1)
    for number in range(9):
        other = Organization.objects.create(slug=f"other-{number}", name=f"Other {number}")
        fill(other, count=rows // 90, people=people, clients=clients, now=now, seed=number + 2)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {AuditEvent._meta.db_table}")
    print(f"filled {AuditEvent.objects.count():,} audit rows in {time.perf_counter() - started:.0f} s")
    return big, admin, User.objects.get(pk=people[0])


def connect_everyone(
    organization: Organization, *, people: list[int], clients: list[Application], now: datetime
) -> None:
    """A live OAuth connection of each person with each client: one token family each, as the token endpoint makes."""
    for person in people:
        for client in clients:
            access = AccessToken.objects.create(
                user_id=person,
                application=client,
                organization=organization,
                token=f"bench-access-{person}-{client.pk}",
                expires=now + timedelta(hours=1),
                scope="mcp:operator.read",
            )
            RefreshToken.objects.create(
                user_id=person,
                application=client,
                organization=organization,
                access_token=access,
                token=f"bench-refresh-{person}-{client.pk}",
                token_family=uuid.uuid4(),
                authorized_at=now - timedelta(days=20),
            )


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):8.1f}{p95:8.1f}{ordered[-1]:8.1f}"


def timed(request: Callable[[], object], *, requests: int) -> str:
    """p50/p95/max of the wall time, then the p50 of this process's CPU time: on a shared machine the
    wall time waits for the CPU, and the CPU time (Python, templates; not the database's) does not."""
    request()  # warm: templates, prepared statements, caches
    samples, cpu = [], []
    for _ in range(requests):
        started, started_cpu = time.perf_counter(), time.process_time()
        response = request()
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200, response.status_code  # type: ignore[attr-defined]
    return f"{percentiles(samples)}{statistics.median(cpu):10.1f}"


def measure(state: str, browser: Client, *, requests: int) -> None:
    for days in (30, 90):
        figures = timed(lambda days=days: browser.get("/organizations/big/usage/", {"days": days}), requests=requests)
        print(f"{state:<28}{days:>5}{figures}")


def covering_index(create: bool) -> None:
    if connection.vendor != "postgresql":
        return
    table = AuditEvent._meta.db_table
    with connection.cursor() as cursor:
        if create:
            cursor.execute(
                f"CREATE INDEX {COVERING_INDEX} ON {table} (organization_id, occurred_at) "
                "INCLUDE (action, outcome, tool, client_id, person_id, detail)"
            )
            cursor.execute(f"VACUUM ANALYZE {table}")
        else:
            cursor.execute(f"DROP INDEX {COVERING_INDEX}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="audit rows of the big organization")
    parser.add_argument("--requests", type=int, default=40, help="timed requests per state and span")
    parser.add_argument("--slow-requests", type=int, default=5, help="timed requests of the two events-only states")
    parser.add_argument("--skip-events-only", action="store_true", help="time only the roll-up and connections")
    parser.add_argument("--keep", action="store_true", help="use and keep the configured database")
    options = parser.parse_args()
    database = None
    if options.keep:
        call_command("migrate", verbosity=0)
    else:
        setup_test_environment()
        database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        now = timezone.now()
        print(f"database={connection.vendor}, load average {os.getloadavg()[0]:.1f}")
        big, admin, person = setting_up(options.rows, now)
        browser = Client()
        browser.force_login(admin)  # type: ignore[arg-type]
        print(f"\n{'state':<28}{'days':>5}{'p50':>8}{'p95':>8}{'max':>8}{'cpu p50':>10}   (ms)")
        DailyUsage.objects.all().delete()
        if not options.skip_events_only:
            measure("events only", browser, requests=options.slow_requests)
            covering_index(True)
            measure("events, covering index", browser, requests=options.slow_requests)
            covering_index(False)
        started = time.perf_counter()
        written = roll_up_usage(now=now - timedelta(days=1), time_zones={big.pk: big.time_zone})
        first = time.perf_counter() - started
        measure("roll-up, 2 days counted live", browser, requests=options.requests)
        started = time.perf_counter()
        roll_up_usage(now=now, time_zones={big.pk: big.time_zone})
        next_day = time.perf_counter() - started
        figures = timed(lambda: browser.get("/organizations/big/connections/"), requests=options.requests)
        print(f"{'organization connections':<28}{'':>5}{figures}")
        own = Client()
        own.force_login(person)  # type: ignore[arg-type]
        figures = timed(lambda: own.get("/account/connections/"), requests=options.requests)
        print(f"{'own connections (a person)':<28}{'':>5}{figures}")
        print(f"\nroll-up: first run {first:.1f} s ({written:,} rows), next day {next_day:.2f} s")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        if database is not None:
            connection.creation.destroy_test_db(database, verbosity=0)


if __name__ == "__main__":
    main()
