"""Servers the fault tests break on purpose: a private PostgreSQL cluster, a private Redis, gunicorn.

Each is started by the test for itself, on loopback, under a temporary folder,
and stopped by a class cleanup whatever happens. A shared PostgreSQL or Redis
(DATABASE_URL, REDIS_URL) is never used here: restarting it would break every
other test of the run. Missing binaries skip the tests on a developer machine
and fail them under CI (tests/support.py, `require`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.live_servers import free_port, stop, wait_for_port
from tests.support import require

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PG_USER = "postgres"
PG_DATABASE = "operator"
COMMAND_TIMEOUT_SECONDS = 60


def require_fault_servers() -> None:
    """Skip (or fail under CI) unless PostgreSQL 15's server and redis-server are installed."""
    require((PG_BIN / "initdb").exists(), "PostgreSQL 15 server binaries are not installed", component="postgresql")
    require(shutil.which("redis-server") is not None, "redis-server is not installed", component="redis")


class PrivatePostgres:
    """A throwaway PostgreSQL 15 cluster in `workdir`, with trust authentication on loopback only.

    Run as the `postgres` user when the tests run as root (PostgreSQL refuses
    root), as `.ci/run` does.
    """

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir / "pg"
        self.data = self.dir / "data"
        self.port = free_port()
        self.url = f"postgres://{PG_USER}@127.0.0.1:{self.port}/{PG_DATABASE}"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", PG_USER, "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS)

    def create(self) -> None:
        self.dir.mkdir(mode=0o755)
        if os.geteuid() == 0:
            shutil.chown(self.dir, PG_USER, PG_USER)
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", PG_USER, "--auth=trust", "--no-sync")
        self.start()
        self._run(str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, PG_DATABASE)

    def _pg_ctl(self, action: str, *options: str) -> None:
        # The log file keeps the server off our pipes, which would otherwise never close.
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), *options, "-w", action)

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off -c full_page_writes=off"
        self._pg_ctl("start", "-o", options)

    def restart(self) -> None:
        """A fast restart, as an upgrade or a failover does it: every connection is cut."""
        self._pg_ctl("restart", "-m", "fast")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._pg_ctl("stop", "-m", "immediate")


class PrivateRedis:
    """A redis-server on a fixed loopback port that the test may stop and start again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log = workdir / "redis.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.process, self.log)

    def stop(self) -> None:
        stop(self.process)
        self.process = None


def worker_pids(master: subprocess.Popen) -> list[int]:
    """The gunicorn master's current worker processes."""
    children = Path(f"/proc/{master.pid}/task/{master.pid}/children").read_text().split()
    return [int(pid) for pid in children]


def kill_workers(master: subprocess.Popen, *, base_url: str) -> int:
    """SIGKILL every worker of `master`, as the OOM killer would; return once a new one answers."""
    killed = sigkill_workers(master)
    wait_for_new_worker(master, killed, base_url=base_url)
    return len(killed)


def sigkill_workers(master: subprocess.Popen) -> list[int]:
    """SIGKILL every worker of `master`, as the OOM killer would; the ids of those killed."""
    killed = worker_pids(master)
    for pid in killed:
        os.kill(pid, 9)
    return killed


def wait_for_new_worker(master: subprocess.Popen, killed: list[int], *, base_url: str) -> None:
    """Return once `master` has replaced the `killed` workers and one answers."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not set(worker_pids(master)) & set(killed) and worker_pids(master):
            try:
                if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    raise AssertionError("gunicorn started no new worker within 30 seconds")


def describe(response: httpx.Response) -> dict[str, Any]:
    """What a fault test keeps of a response: status, content type, Retry-After, JSON body if any."""
    content_type = response.headers.get("content-type", "")
    body = response.json() if content_type.startswith("application/json") else None
    return {
        "status": response.status_code,
        "content_type": content_type,
        "retry_after": response.headers.get("retry-after"),
        "body": body,
    }
