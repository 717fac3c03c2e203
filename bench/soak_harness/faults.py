"""The faults of a soak run, on a schedule scaled to its length, and how long the service took to recover.

A fault ends when what broke is back: PostgreSQL restarted, Redis started, the
killed server started again and answering /readyz, the last server of the
rolling upgrade put back.
The service has recovered when, from then on, a tool call and a headless
registration succeed through the proxy and the proxy has every server up; the
invariant is that this takes at most RECOVERY_SECONDS.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.soak_harness.answers import SUCCESS, Recorder, classify
from bench.soak_harness.clients import Context, call_tool, http_client, new_address
from bench.soak_harness.stack import AppServer, Proxy
from tests.agent_auth.support import START_URL
from tests.faults.servers import PrivatePostgres, PrivateRedis

RECOVERY_SECONDS = 10
GIVE_UP_SECONDS = 90
DRAIN_SECONDS = 10
PROBE_INTERVAL = 0.5
REDIS_OUTAGE_SECONDS = 20
PROBE_TOOLS = ("get_module", "list_modules")


@dataclass
class FaultRecord:
    name: str
    started: float
    ended: float = 0.0
    recovered_after: float | None = None  # seconds from the end; None: not within GIVE_UP_SECONDS
    note: str = ""


def schedule(duration: float) -> list[tuple[float, str]]:
    """(run time, fault) pairs: every fault once, spread over the run, with a quiet tail for the last one."""
    return [
        (0.10 * duration, "postgres-restart"),
        (0.25 * duration, "redis-outage"),
        (0.42 * duration, "server-kill"),
        (0.55 * duration, "rolling-upgrade"),
    ]


def redis_outage_seconds(duration: float) -> float:
    """20 s in a run of 5 minutes or more; in a shorter run a fifteenth of it, at least 5 s."""
    return min(REDIS_OUTAGE_SECONDS, max(5.0, duration / 15))


class Faults:
    def __init__(
        self,
        context: Context,
        *,
        postgres: PrivatePostgres,
        redis: PrivateRedis,
        servers: list[AppServer],
        proxy: Proxy,
        probe_token: str,
        probe_module: str,
        old_code: Path,
        new_code: Path,
        redis_seconds: float,
        before_recovery: Callable[[str], None] | None = None,
    ) -> None:
        self.context = context
        self.recorder: Recorder = context.recorder
        self.postgres, self.redis, self.servers, self.proxy = postgres, redis, servers, proxy
        self.probe_token, self.probe_module = probe_token, probe_module
        self.old_code, self.new_code = old_code, new_code
        self.redis_seconds = redis_seconds
        self.before_recovery = before_recovery
        self.records: list[FaultRecord] = []
        self.redis_down: list[tuple[float, float]] = []

    def run(self, name: str) -> FaultRecord:
        record = FaultRecord(name, self.recorder.now())
        self.records.append(record)
        self.recorder.phase = name
        getattr(self, name.replace("-", "_"))(record)
        record.ended = self.recorder.now()
        if self.before_recovery is not None:
            self.before_recovery(name)
        record.recovered_after = self._recovery(record.ended)
        self.recorder.phase = "steady"
        after = "never" if record.recovered_after is None else f"{record.recovered_after:.1f} s"
        print(f"t={record.started:5.0f}s {name}: ended at {record.ended:.0f}s, recovered after {after}", flush=True)
        return record

    def postgres_restart(self, record: FaultRecord) -> None:
        self.postgres.restart()

    def redis_outage(self, record: FaultRecord) -> None:
        self.redis.stop()
        self.context.stopping.wait(self.redis_seconds)
        self.redis.start()
        self.redis_down.append((record.started, self.recorder.now()))
        record.note = f"Redis stopped for {self.redis_seconds:.0f} s"

    def server_kill(self, record: FaultRecord) -> None:
        """The fault lasts until the new server answers /readyz: how long it boots is the machine's, not a recovery."""
        server = self.servers[0]
        server.kill()
        restarted = self.recorder.now()
        server.start()
        server.wait_ready()
        booted = self.recorder.now() - restarted
        record.note = f"{server.name} SIGKILLed with its workers, started again, ready {booted:.1f} s later"

    def rolling_upgrade(self, record: FaultRecord) -> None:
        """Each server in turn to the previous release, then each back to this one."""
        for code_dir in (self.old_code, self.new_code):
            for server in self.servers:
                self.proxy.set_state(server, "drain")
                deadline = time.monotonic() + DRAIN_SECONDS
                while self.proxy.current_sessions(server) and time.monotonic() < deadline:
                    time.sleep(0.1)
                server.stop()
                server.start(code_dir)
                server.wait_ready()
                self.proxy.set_state(server, "ready")
                self.proxy.wait_up(server)
        record.note = f"to {self.old_code.name} and back, one server at a time"

    def probe(self) -> bool:
        """A tool call and a headless registration succeed through the proxy, and every server is up there."""
        if not all(status.startswith("UP") for status in self.proxy.statuses().values()):
            return False
        tool = PROBE_TOOLS[int(self.recorder.now() / PROBE_INTERVAL) % len(PROBE_TOOLS)]
        arguments = {"moduleId": self.probe_module} if tool == "get_module" else {"limit": 1}
        with http_client(self.context.base_url, new_address()) as http:
            answers = [call_tool(http, self.recorder, self.probe_token, tool, arguments)]
            # An address with no account: 202 without an email (docs/headless.md), so no mail to count.
            body = {"email": f"probe-{uuid.uuid4().hex[:8]}@nobody.test"}
            answers.append(self.recorder.send("probe:headless", lambda: http.post(START_URL, json=body)))
        return all(answer is not None and classify(answer)[0] == SUCCESS for answer in answers)

    def _recovery(self, ended: float) -> float | None:
        while self.recorder.now() - ended < GIVE_UP_SECONDS:
            if self.probe():
                return self.recorder.now() - ended
            time.sleep(PROBE_INTERVAL)
        return None
