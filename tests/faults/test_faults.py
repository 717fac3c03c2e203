"""The service under real faults: PostgreSQL restarted, Redis stopped, workers SIGKILLed (docs/operations.md#outages).

Real components end to end, all started here on loopback and stopped by the
class cleanups: a private PostgreSQL 15 cluster and a private Redis
(tests/faults/servers.py), gunicorn with two gthread workers serving the real
WSGI application, aiosmtpd receiving the verification emails, and the email
worker as `manage.py db_worker --batch`, the scheduled mode CI exercises.

Every loop is bounded by a deadline; the only pauses are pacing between
requests, never a wait for a rate window's edge.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
from django.core.cache.backends.redis import RedisCache

from mcp_operator.limits import leases_key
from operator_core.errors import OUTAGE_RETRY_AFTER_SECONDS, ErrorCode
from tests.faults.base import BURST_TOOLS, CSRF_FIELD, EMAIL, LEASE_SECONDS, SLOTS, TOOL, FaultTestCase, all_ok_since
from tests.faults.servers import (
    describe,
    kill_workers,
    sigkill_workers,
    wait_for_new_worker,
)
from tests.live_servers import BASE_DIR, free_port, start_gunicorn
from tests.mcp_requests import CLIENT_META


class FaultTests(FaultTestCase):
    # --- PostgreSQL restart ----------------------------------------------------------------

    def test_a_postgresql_restart_during_a_burst_answers_json_and_calls_recover(self) -> None:
        outcomes: list[tuple[float, str]] = []
        stop = threading.Event()
        deadline = time.monotonic() + 90
        # As many callers of each tool as it has slots: the burst is never concurrency-limited.
        threads = [
            threading.Thread(target=self.traffic, args=(tool, outcomes, stop, deadline))
            for tool in BURST_TOOLS
            for _ in range(SLOTS)
        ]
        for thread in threads:
            thread.start()
        try:
            self.wait_until(lambda: len(outcomes) >= 50, seconds=30)  # the burst is under way
            self.postgres.restart()
            restarted = time.monotonic()
            # recovered: forty answers in a row after the restart, all successes
            self.wait_until(lambda: all_ok_since(outcomes, after=restarted, count=40), seconds=30)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=60)

        counts = Counter(outcome for _, outcome in outcomes)
        first_ok = min(moment for moment, outcome in outcomes if moment > restarted and outcome == "ok")
        summary = f"{dict(counts)}; first success {first_ok - restarted:.2f} s after the restart"
        self.assertEqual([outcome for outcome in counts if outcome.startswith("bad")], [], summary)
        self.assertLessEqual(set(counts), {"ok", "unavailable", ErrorCode.TEMPORARILY_UNAVAILABLE}, summary)
        self.assertGreater(counts["unavailable"] + counts[ErrorCode.TEMPORARILY_UNAVAILABLE], 0, summary)
        self.assertLess(first_ok - restarted, 10, summary)

    # --- Redis stopped and started ---------------------------------------------------------

    def visit_every_endpoint(self, client: httpx.Client) -> dict[str, dict[str, Any]]:
        """One request to each limited endpoint; what each answered."""
        page = client.get(f"{self.base_url}/api/auth/sign-in")
        csrf = CSRF_FIELD.search(page.text)
        self.assertIsNotNone(csrf, page.text[:300])
        docs = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": CLIENT_META}}
        return {
            "tool_call": describe(self.call_tool(client)),
            "docs": describe(
                client.post(f"{self.base_url}/api/mcp/docs", json=docs, headers={"Mcp-Method": "tools/list"})
            ),
            "sign_in": describe(
                client.post(
                    f"{self.base_url}/api/auth/sign-in",
                    data={"email": EMAIL, "password": "wrong", "next": "", "csrfmiddlewaretoken": csrf.group(1)},
                )
            ),
            "headless_start": describe(
                client.post(f"{self.base_url}/api/agent/auth", json={"email": "nobody@example.test"})
            ),
            "headless_complete": describe(
                client.post(
                    f"{self.base_url}/api/agent/auth/claim/complete", json={"claim_token": "x" * 43, "code": "123456"}
                )
            ),
        }

    def test_a_redis_outage_keeps_the_server_ready_answers_each_endpoint_as_documented_and_recovers(self) -> None:
        with httpx.Client(timeout=30) as client:
            self.redis.stop()
            try:
                during = self.visit_every_endpoint(client)
                # What the load balancer and the operator's alerts are told meanwhile.
                ready = describe(client.get(f"{self.base_url}/readyz"))
                dependencies = describe(client.get(f"{self.base_url}/healthz/dependencies"))
            finally:
                self.redis.start()
            after: dict[str, dict[str, Any]] = {}
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                after = self.visit_every_endpoint(client)
                if after["headless_start"]["status"] == 202:
                    break

        self.assertEqual(ready["status"], 200, ready)
        self.assertEqual(dependencies["status"], 503, dependencies)
        self.assertEqual(dependencies["body"]["dependencies"], {"database": "up", "redis": "down"})
        statuses = {name: seen["status"] for name, seen in during.items()}
        self.assertEqual(
            statuses,
            {"tool_call": 200, "docs": 200, "sign_in": 503, "headless_start": 503, "headless_complete": 503},
            during,
        )
        self.assertNotIn("error", during["tool_call"]["body"]["result"]["structuredContent"])
        self.assertTrue(during["sign_in"]["content_type"].startswith("text/html"))
        for name in ("sign_in", "headless_start", "headless_complete"):
            self.assertEqual(during[name]["retry_after"], str(OUTAGE_RETRY_AFTER_SECONDS), name)
        for name in ("headless_start", "headless_complete"):
            self.assertEqual(during[name]["body"]["error"]["code"], ErrorCode.TEMPORARILY_UNAVAILABLE, name)
        recovered = {name: seen["status"] for name, seen in after.items()}
        self.assertEqual(
            recovered,
            {"tool_call": 200, "docs": 200, "sign_in": 400, "headless_start": 202, "headless_complete": 404},
            after,
        )

    # --- a worker killed while it holds slots ----------------------------------------------

    @contextlib.contextmanager
    def module_table_locked(self) -> Iterator[None]:
        """Hold every read of the tool's table until the block ends: calls wait, holding their slots."""
        with psycopg.connect(self.postgres.url.replace("postgres://", "postgresql://")) as connection:
            connection.execute(f'LOCK TABLE "{self.seed["module_table"]}" IN ACCESS EXCLUSIVE MODE')
            try:
                yield
            finally:
                connection.rollback()

    def slots_held(self) -> int:
        key = leases_key(user_id=self.seed["user_id"], organization_id=self.seed["organization_id"], tool_name=TOOL)
        cache = RedisCache(self.redis.url, {})
        client = cache._cache.get_client(write=False)
        return int(client.zcount(cache.make_and_validate_key(key), f"({int(time.time() * 1000)}", "+inf"))

    def calls_in_flight(self, count: int) -> tuple[list[threading.Thread], list[str]]:
        outcomes: list[str] = []

        def one() -> None:
            with httpx.Client(timeout=60) as client:
                try:
                    outcomes.append(self.outcome(self.call_tool(client)))
                except httpx.TransportError as failure:
                    outcomes.append(f"cut:{type(failure).__name__}")

        threads = [threading.Thread(target=one) for _ in range(count)]
        for thread in threads:
            thread.start()
        return threads, outcomes

    def lease_deadlines(self) -> list[float]:
        """When each held lease of the tool's slots lapses, in seconds since the epoch (this machine's clock)."""
        key = leases_key(user_id=self.seed["user_id"], organization_id=self.seed["organization_id"], tool_name=TOOL)
        cache = RedisCache(self.redis.url, {})
        client = cache._cache.get_client(write=False)
        scores = client.zrangebyscore(
            cache.make_and_validate_key(key), f"({int(time.time() * 1000)}", "+inf", withscores=True
        )
        return sorted(score / 1000 for _, score in scores)

    def second_server(self) -> str:
        """Another app server on the same database and Redis, already serving: what a killed one's clients reach."""
        port = free_port()
        start_gunicorn(
            type(self),
            environment=self.environment,
            port=port,
            log=self.workdir / "gunicorn-b.log",
            workers=1,
            threads=8,
        )
        base_url = f"http://127.0.0.1:{port}"
        # Its first tool call loads what Django loads lazily; none of the calls judged below should pay for it.
        with httpx.Client(timeout=60) as client:
            self.assertEqual(self.outcome(self.call_tool(client, base_url=base_url)), "ok")
        self.wait_until(lambda: self.slots_held() == 0, seconds=10)
        return base_url

    def test_slots_of_a_killed_worker_are_usable_again_within_the_lease_time(self) -> None:
        # The answers are judged against the leases' own deadlines, read from Redis, and are
        # asked of a server already up: neither how long the killed server takes to replace its
        # workers nor the machine's load decides what a call may see.
        other = self.second_server()
        with self.module_table_locked():
            threads, cut = self.calls_in_flight(SLOTS)
            self.wait_until(lambda: self.slots_held() == SLOTS, seconds=20)
            deadlines = self.lease_deadlines()
            killed = sigkill_workers(self.gunicorn)
        self.assertEqual(len(deadlines), SLOTS)
        for thread in threads:
            thread.join(timeout=60)

        # Answered while every lease held: refused. Sent once every lease had lapsed: served.
        while_held: list[str] = []
        once_lapsed: str | None = None
        with httpx.Client(timeout=30) as client:
            while once_lapsed is None and time.time() < deadlines[-1] + 30:
                sent = time.time()
                outcome = self.outcome(self.call_tool(client, base_url=other))
                if time.time() < deadlines[0]:
                    while_held.append(outcome)
                elif sent > deadlines[-1]:
                    once_lapsed = outcome
                time.sleep(0.1)  # pacing of the continued traffic
        # Every slot free again: the lapsed leases, and the last call's own, given back after its answer.
        self.wait_until(lambda: self.slots_held() == 0, seconds=10)
        wait_for_new_worker(self.gunicorn, killed, base_url=self.base_url)
        with self.module_table_locked():
            threads, held = self.calls_in_flight(SLOTS)
            self.wait_until(lambda: self.slots_held() == SLOTS, seconds=20)
            with httpx.Client(timeout=30) as client:
                fifth = self.outcome(self.call_tool(client))
        for thread in threads:
            thread.join(timeout=60)

        summary = f"killed {len(killed)} workers; while the leases held: {Counter(while_held)}; then {once_lapsed}"
        self.assertEqual(len(cut), SLOTS, summary)
        self.assertTrue(while_held, f"no call was answered within the {LEASE_SECONDS} s the leases held; {summary}")
        self.assertEqual(set(while_held), {ErrorCode.CONCURRENCY_LIMITED}, summary)
        self.assertEqual(once_lapsed, "ok", summary)
        self.assertEqual(fifth, ErrorCode.CONCURRENCY_LIMITED, summary)
        self.assertEqual(held, ["ok"] * SLOTS, summary)

    # --- a worker killed between the 202 and the email ---------------------------------------

    def run_email_worker(self, *, at_once: int) -> str:
        """`manage.py db_worker --batch`, `at_once` processes side by side; each exits when nothing is due."""
        command = [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay", "--no-reload"]
        workers = [
            subprocess.Popen(
                command, cwd=BASE_DIR, env=self.environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            for _ in range(at_once)
        ]
        outputs = []
        for worker in workers:
            output, _ = worker.communicate(timeout=120)
            outputs.append(output.decode())
            self.assertEqual(worker.returncode, 0, outputs[-1][-2000:])
        return "".join(outputs)

    def test_a_worker_killed_after_the_202_still_gets_the_code_out_exactly_once(self) -> None:
        self.smtp.inbox.clear()
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            started = client.post("/api/agent/auth", json={"email": EMAIL}, headers={"Idempotency-Key": "crash-1"})
            self.assertEqual(started.status_code, 202, started.text)
            kill_workers(self.gunicorn, base_url=self.base_url)
            replayed = client.post("/api/agent/auth", json={"email": EMAIL}, headers={"Idempotency-Key": "crash-1"})
            sent_by_the_app = self.smtp.inbox.mails()

            worked = self.run_email_worker(at_once=2) + self.run_email_worker(at_once=1)
            mails = [mail for mail in self.smtp.inbox.mails() if EMAIL in mail.recipients]
            self.assertEqual(len(mails), 1, worked[-3000:])
            # The repeat's token replaced the first one; the code of the one email completes it.
            completed = client.post(
                "/api/agent/auth/claim/complete",
                json={"claim_token": replayed.json()["claim_token"], "code": mails[0].code},
            )

        self.assertEqual(sent_by_the_app, [])
        self.assertEqual(replayed.status_code, 202, replayed.text)
        self.assertNotEqual(replayed.json()["claim_token"], started.json()["claim_token"])
        self.assertEqual(replayed.headers["Idempotent-Replayed"], "true")
        self.assertEqual(completed.status_code, 200, completed.text)

    # --- plumbing ----------------------------------------------------------------------------
