"""The processes of a soak run: two gunicorn app servers, the email worker and HAProxy.

PostgreSQL, Redis and the SMTP sink are the fault tests' and headless tests' own
helpers (tests/faults/servers.py, tests/agent_auth/support.py); what is here is
what only a fleet needs: app servers that can be killed, drained and replaced
by another checkout, a supervised email worker, and the proxy run from the
shipped deploy/haproxy.cfg with its runtime API.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from tests.live_servers import BASE_DIR, free_port, stop, wait_for_port

HAPROXY = "/usr/sbin/haproxy"
HAPROXY_CONFIG = BASE_DIR / "deploy" / "haproxy.cfg"
BACKEND = "app"
READY_TIMEOUT_SECONDS = 60
# Two sync workers per server, as gunicorn.conf.py runs them (threads: 1) on a 2-core machine.
WORKERS_PER_SERVER = 2


class AppServer:
    """One gunicorn master, started with the checkout's own gunicorn.conf.py, in a process group of its own."""

    def __init__(self, name: str, *, environment: dict[str, str], workdir: Path) -> None:
        self.name = name
        self.port = free_port()
        self.environment = environment
        self.log = workdir / f"{name}.log"
        self.code_dir = BASE_DIR
        self.process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, code_dir: Path | None = None) -> None:
        if code_dir is not None:
            self.code_dir = code_dir
        environment = {
            **self.environment,
            "GUNICORN_BIND": self.address,
            "GUNICORN_WORKERS": str(WORKERS_PER_SERVER),
        }
        self.process = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "-c", "gunicorn.conf.py", "operator_site.wsgi"],
            cwd=self.code_dir,
            env=environment,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for_port(self.port, self.process, self.log)

    def ready(self) -> bool:
        try:
            return httpx.get(f"http://{self.address}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer /readyz within {timeout:.0f} s")

    def kill(self) -> None:
        """SIGKILL the master and its workers at once, as a machine or the OOM killer would end them."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """A graceful stop: gunicorn finishes the requests in hand (SIGTERM)."""
        stop(self.process)


class EmailWorker:
    """`manage.py db_worker`, restarted whenever it exits, as compose.yaml's `restart: unless-stopped` does."""

    def __init__(self, *, environment: dict[str, str], workdir: Path) -> None:
        self.environment = environment
        self.log = workdir / "email-worker.log"
        self.restarts = 0
        self._process: subprocess.Popen | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="email-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _supervise(self) -> None:
        while not self._stopping.is_set():
            self._process = subprocess.Popen(
                [sys.executable, "manage.py", "db_worker", "--no-startup-delay"],
                cwd=BASE_DIR,
                env=self.environment,
                stdout=self.log.open("ab"),
                stderr=subprocess.STDOUT,
            )
            self._process.wait()
            if not self._stopping.is_set():
                self.restarts += 1
                self._stopping.wait(1)

    def stop(self) -> None:
        self._stopping.set()
        stop(self._process)
        self._thread.join(timeout=15)


class Proxy:
    """HAProxy from Debian, run from the shipped deploy/haproxy.cfg, with its runtime API on a socket."""

    def __init__(self, servers: list[AppServer], *, workdir: Path) -> None:
        self.port = free_port()
        self.socket_path = workdir / "haproxy.sock"
        self.log = workdir / "haproxy.log"
        self.servers = servers
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        environment = {
            "PATH": os.environ.get("PATH", ""),
            "OPERATOR_PROXY_BIND": f"127.0.0.1:{self.port}",
            "OPERATOR_PROXY_SOCKET": str(self.socket_path),
            "OPERATOR_APP_1": self.servers[0].address,
            "OPERATOR_APP_2": self.servers[1].address,
            "OPERATOR_APP_WORKERS": str(WORKERS_PER_SERVER),
        }
        self.process = subprocess.Popen(
            [HAPROXY, "-db", "-f", str(HAPROXY_CONFIG)],
            env=environment,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        wait_for_port(self.port, self.process, self.log)

    def command(self, line: str) -> str:
        """One command of HAProxy's runtime API; its answer."""
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(5)
            connection.connect(str(self.socket_path))
            connection.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def set_state(self, server: AppServer, state: str) -> None:
        """`ready`, `drain` or `maint` for one server (HAProxy's `set server`)."""
        answer = self.command(f"set server {BACKEND}/{server.name} state {state}").strip()
        if answer:
            raise RuntimeError(f"haproxy refused `set server {server.name} state {state}`: {answer}")

    def statuses(self) -> dict[str, str]:
        """Each server's status as the proxy sees it (UP, DOWN, DRAIN, MAINT, ...)."""
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        name_at, proxy_at, status_at = header.index("svname"), header.index("pxname"), header.index("status")
        statuses = {}
        for line in lines[1:]:
            fields = line.split(",")
            if len(fields) > status_at and fields[proxy_at] == BACKEND and fields[name_at] not in ("BACKEND",):
                statuses[fields[name_at]] = fields[status_at]
        return statuses

    def current_sessions(self, server: AppServer) -> int:
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        for line in lines[1:]:
            fields = line.split(",")
            if fields[header.index("pxname")] == BACKEND and fields[header.index("svname")] == server.name:
                return int(fields[header.index("scur")] or 0)
        return 0

    def wait_up(self, server: AppServer, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.statuses().get(server.name, "").startswith("UP"):
                return
            time.sleep(0.2)
        raise RuntimeError(f"the proxy did not put {server.name} back within {timeout:.0f} s")

    def stop(self) -> None:
        stop(self.process)
