"""One soak run from start to report: the stack, the data, the clients, the faults, the invariants."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import TYPE_CHECKING

from tests.faults.servers import PrivatePostgres, PrivateRedis, require_fault_servers
from tests.live_servers import BASE_DIR, manage

if TYPE_CHECKING:  # imported at run time once Django is set up
    from bench.soak_harness.answers import Recorder
    from bench.soak_harness.clients import Refresher
    from bench.soak_harness.faults import Faults
    from bench.soak_harness.headless import HeadlessClient
    from bench.soak_harness.stack import EmailWorker
    from tests.agent_auth.support import SmtpServer

SOAK_FILE = "bench/soak.py"
HAPROXY = "/usr/sbin/haproxy"
CALLERS = 3  # threads per person and tool: below the 4 calls at once each may have
TOOLS = {"list_modules": {"limit": 25}, "search_knowledge": {"query": "forklift inspection", "limit": 10}}


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/soak.py", description="Soak the service behind HAProxy through faults."
    )
    parser.add_argument("--duration", type=float, default=600, help="seconds of load (default 600)")
    parser.add_argument(
        "--upgrade-from", help="the previous release for the rolling upgrade (default: the commit before the harness's)"
    )
    parser.add_argument("--people", type=int, default=3, help="people calling tools (default 3, two tools each)")
    parser.add_argument(
        "--load", type=float, default=10, help="total tool calls as a multiple of the per-tool limit (default 10)"
    )
    parser.add_argument(
        "--tool-limit", type=int, default=120, help="OPERATOR_TOOL_CALLS_PER_MINUTE for the run (default 120)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, data) and print its path")
    parser.add_argument(
        "--break",
        dest="sabotage",
        choices=["audit", "families", "emails", "idempotency", "limits", "recovery"],
        help="break one invariant on purpose mid-run, to see that its check fails (bench/README.md)",
    )
    return parser.parse_args(argv)


def git(*arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=BASE_DIR, check=True, capture_output=True, text=True).stdout.strip()


def previous_release(given: str | None) -> str:
    """`given`, else the parent of the commit that added this harness, else this checkout's own commit."""
    if given:
        return git("rev-parse", "--verify", f"{given}^{{commit}}")
    added = git("log", "--diff-filter=A", "--format=%H", "--", SOAK_FILE).splitlines()
    return git("rev-parse", f"{added[-1]}^") if added else git("rev-parse", "HEAD")


def export(revision: str, folder: Path) -> Path:
    """A checkout of `revision` (its tracked files, as `git archive` writes them) in `folder`."""
    folder.mkdir()
    archive = subprocess.Popen(["git", "archive", revision], cwd=BASE_DIR, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(folder)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {revision} failed")
    return folder


def main(argv: list[str] | None = None) -> int:
    settings = options(argv)
    # Whoever runs the soak asked for every component: a missing one ends it, never skips a part.
    try:
        require_fault_servers()
    except unittest.SkipTest as missing:
        raise SystemExit(f"soak: {missing} (Debian: postgresql-15, redis-server)") from None
    if not Path(HAPROXY).exists():
        raise SystemExit("soak: HAProxy is not installed (Debian: haproxy)")
    workdir = Path(tempfile.mkdtemp(prefix="operator-soak-"))
    workdir.chmod(0o755)  # the cluster's own user must reach its folder
    with contextlib.ExitStack() as cleanup:
        if settings.keep:
            print(f"work folder: {workdir}")
        else:
            cleanup.callback(shutil.rmtree, workdir, ignore_errors=True)
        return soak(settings, workdir, cleanup)
    return 1


def soak(settings: argparse.Namespace, workdir: Path, cleanup: contextlib.ExitStack) -> int:
    from operator_core.signing_keys import generate_private_key_pem, generate_secret_key

    revision = previous_release(settings.upgrade_from)
    postgres = PrivatePostgres(workdir)
    cleanup.callback(postgres.stop)
    postgres.create()
    redis = PrivateRedis(workdir)
    cleanup.callback(redis.stop)
    redis.start()
    (workdir / "var").mkdir()
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "operator_site.settings",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECRET_KEY": generate_secret_key(),
        "OPERATOR_SIGNING_KEY": generate_private_key_pem(),
        "OPERATOR_LTI_KEY": generate_private_key_pem(),
        "OPERATOR_VAR_DIR": str(workdir / "var"),
        "DATABASE_URL": postgres.url,
        "REDIS_URL": redis.url,
        "OPERATOR_TRUSTED_PROXIES": "1",
        "OPERATOR_TOOL_CALLS_PER_MINUTE": str(settings.tool_limit),
        "LOG_LEVEL": "WARNING",
        "GUNICORN_LOG_LEVEL": "warning",
    }
    from bench.soak_harness.stack import AppServer, EmailWorker, Proxy

    servers = [AppServer(name, environment={}, workdir=workdir) for name in ("app1", "app2")]
    proxy = Proxy(servers, workdir=workdir)
    environment["OPERATOR_BASE_URL"] = proxy.base_url
    os.environ.update(environment)

    import django

    django.setup()
    from django.db import connections

    from bench.soak_harness import sabotage
    from bench.soak_harness.answers import Recorder
    from bench.soak_harness.clients import Context, Refresher, connector, docs_caller, tool_caller
    from bench.soak_harness.faults import Faults, redis_outage_seconds, schedule
    from bench.soak_harness.headless import HeadlessClient
    from bench.soak_harness.seed import seed
    from tests.agent_auth.support import SmtpServer

    smtp = SmtpServer()
    smtp.start()
    cleanup.callback(smtp.stop)
    environment.update({"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(smtp.port)})
    manage("migrate", "--noinput", environment=environment)
    headless_interval = 3.0
    seeded = seed(
        tool_people=settings.people,
        signing_in=4,
        refreshing=2,
        headless=math.ceil(settings.duration / headless_interval / 5) + 2,
        token_seconds=int(settings.duration) + 3600,
    )
    connections.close_all()  # PostgreSQL restarts during the run; the checks open a fresh one
    old_code = export(revision, workdir / f"release-{revision[:10]}")
    for server in servers:
        server.environment = dict(environment)
        cleanup.callback(server.stop)
    if settings.sabotage == "limits":
        sabotage.separate_counters(servers[1], redis.url)
    for server in servers:
        server.start()
    for server in servers:
        server.wait_ready()
    worker = EmailWorker(environment=environment, workdir=workdir)
    cleanup.callback(worker.stop)
    worker.start()
    cleanup.callback(proxy.stop)
    proxy.start()
    for server in servers:
        proxy.wait_up(server)

    recorder = Recorder()
    context = Context(proxy.base_url, recorder, threading.Event())
    cleanup.callback(context.stopping.set)  # a run that fails midway stops its clients first
    duration = settings.duration
    interval = len(TOOLS) * settings.people / (settings.load * settings.tool_limit / 60)
    # Several callers per counter, so that the offered rate holds while answers are slow.
    threads = [
        threading.Thread(target=tool_caller, args=(context, token, tool, arguments, interval * CALLERS), daemon=True)
        for _, token in seeded.tool_people
        for tool, arguments in TOOLS.items()
        for _ in range(CALLERS)
    ]
    refreshers = [
        Refresher(context, person, interval=2.0, replay_at=0.35 * duration if number == 0 else None)
        for number, person in enumerate(seeded.refreshing)
    ]
    headless = HeadlessClient(context, seeded.headless, smtp, interval=headless_interval)
    threads += [threading.Thread(target=refresher.run, daemon=True) for refresher in refreshers]
    threads.append(threading.Thread(target=headless.run, daemon=True))
    threads.append(threading.Thread(target=connector, args=(context, seeded.signing_in, 6.0), daemon=True))
    threads.append(threading.Thread(target=docs_caller, args=(context, 0.5), daemon=True))
    faults = Faults(
        context,
        postgres=postgres,
        redis=redis,
        servers=servers,
        proxy=proxy,
        probe_token=seeded.probe_token,
        probe_module=seeded.module_id,
        old_code=old_code,
        new_code=BASE_DIR,
        redis_seconds=redis_outage_seconds(duration),
        before_recovery=sabotage.before_recovery(settings.sabotage, proxy, servers[1]),
    )
    origin_wall = time.time() - recorder.now()
    for thread in threads:
        thread.start()
    sabotage.schedule(
        settings.sabotage, context, at=0.5 * duration, refreshers=refreshers, headless=headless, smtp=smtp
    )
    recorder.phase = "steady"
    for at, name in schedule(duration):
        context.stopping.wait(max(0.0, at - recorder.now()))
        faults.run(name)
    context.stopping.wait(max(0.0, duration - recorder.now()))
    context.stopping.set()
    for thread in threads:
        thread.join(timeout=60)
    recorder.phase = "final checks"
    return finish(settings, revision, recorder, faults, refreshers, headless, smtp, worker, origin_wall)


def finish(
    settings: argparse.Namespace,
    revision: str,
    recorder: Recorder,
    faults: Faults,
    refreshers: list[Refresher],
    headless: HeadlessClient,
    smtp: SmtpServer,
    worker: EmailWorker,
    origin_wall: float,
) -> int:
    from django.db import connections

    from bench.soak_harness import invariants
    from bench.soak_harness.report import print_report

    connections.close_all()  # this process's connection did not survive the PostgreSQL restart
    families = invariants.refresh_families(refreshers)  # refreshes each family once more: answers to report
    answers = recorder.snapshot()
    results = {
        "every successful tool call has exactly one audit record": invariants.audit_records(answers),
        "no refresh-token family revoked but by a real replay": families,
        "every accepted headless registration's email sent exactly once": invariants.emails_once(headless, smtp),
        "no Idempotency-Key answered two different bodies": invariants.idempotency(headless),
        "limits let through no more than their number per window, across both servers": invariants.limits(
            settings.tool_limit, faults.redis_down, origin_wall
        ),
        f"the service recovers within {invariants.RECOVERY_SECONDS} s of each fault ending": invariants.recovery(
            faults.records
        ),
        "every answer is documented (success, 429, 503 with Retry-After, or provoked)": invariants.documented_answers(
            answers
        ),
    }
    calls = sum(1 for answer in answers if answer.kind.startswith("tool:"))
    target = settings.load * settings.tool_limit / 60
    header = [
        f"duration {settings.duration:.0f} s, {settings.people} people x {len(TOOLS)} tools at {settings.load:g}x "
        f"the per-tool limit of {settings.tool_limit}/min: {target:.1f} calls/s wanted, "
        f"{calls / max(recorder.now(), 1):.1f} sent on average (all tool calls over the whole run)",
        f"rolling upgrade to {revision[:12]} and back; email worker restarted {worker.restarts} times",
    ]
    if settings.sabotage:
        header.append(f"SCRATCH RUN: the invariant '{settings.sabotage}' was broken on purpose")
    print_report(answers, results, header=header, duration=recorder.now())
    return 0 if all(held for held, _ in results.values()) else 1
