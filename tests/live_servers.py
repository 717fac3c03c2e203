"""Real servers for tests that need more than one process: gunicorn, Redis, a database of their own.

Each helper registers its own cleanup on the test class (`addClassCleanup`),
so a failing set-up leaves no process behind. Everything listens on loopback.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from django.db import connection

from operator_core.signing_keys import generate_fernet_key, generate_private_key_pem, generate_secret_key
from tests.support import require_redis_url

BASE_DIR = Path(__file__).resolve().parents[1]
START_TIMEOUT_SECONDS = 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited early:\n{log.read_text()[-4000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"server did not listen on {port}:\n{log.read_text()[-4000:]}")


def stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def server_environment(base_url: str, **more: str) -> dict[str, str]:
    """An app server's environment: its settings, `base_url` as its one public origin, fresh secrets of its own.

    Every secret is given, as a deployment gives them (docs/deploy.md), so nothing is read
    from or written to a var/ folder; `more` adds to it or overrides it.
    """
    return {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "operator_site.settings",
        "OPERATOR_BASE_URL": base_url,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECRET_KEY": generate_secret_key(),
        "OPERATOR_SIGNING_KEY": generate_private_key_pem(),
        "OPERATOR_LTI_KEY": generate_private_key_pem(),
        "OPERATOR_IDENTITY_PROVIDER_KEY": generate_fernet_key(),
        **more,
    }


def redis_url_for(test_class: Any, workdir: Path) -> str:
    """REDIS_URL when set, else a private `redis-server` started for the class (skips, or fails under CI)."""
    if os.environ.get("REDIS_URL"):
        return os.environ["REDIS_URL"]
    if not shutil.which("redis-server"):
        return require_redis_url()
    port = free_port()
    log = workdir / "redis.log"
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    test_class.addClassCleanup(stop, process)
    wait_for_port(port, process, log)
    return f"redis://127.0.0.1:{port}/0"


def database_url_for(test_class: Any, workdir: Path) -> str:
    """A fresh database the servers share: on PostgreSQL when the suite runs there, else SQLite in `workdir`."""
    if connection.vendor != "postgresql":
        return f"sqlite:///{workdir / 'shared.sqlite3'}"
    settings = connection.settings_dict
    name = f"operator_live_{uuid.uuid4().hex[:12]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        # Not WITH (FORCE): as a role without pg_signal_backend it refuses when an autovacuum
        # worker is on the database. A plain DROP cancels autovacuum itself; our own sessions
        # (the stopped servers') are ended first.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND usename = current_user AND pid <> pg_backend_pid()",
                [name],
            )
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')

    test_class.addClassCleanup(drop)
    return f"postgres://{settings['USER']}:{settings['PASSWORD']}@{settings['HOST']}:{settings['PORT']}/{name}"


def manage(*arguments: str, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=BASE_DIR,
        env=environment,
        check=True,
        capture_output=True,
        text=True,
        timeout=180,
    )


def start_process_on(
    test_class: Any, command: list[str], *, port: int, log: Path, environment: dict[str, str] | None = None
) -> subprocess.Popen:
    """`command` in a process of its own, stopped with the test class, once it listens on `port`.

    It runs in `environment`, or in this process's environment when none is given.
    """
    process = subprocess.Popen(command, cwd=BASE_DIR, env=environment, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    test_class.addClassCleanup(stop, process)
    wait_for_port(port, process, log)
    return process


def start_shipped_gunicorn(test_class: Any, *, environment: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """gunicorn as deployed: the shipped gunicorn.conf.py, configured by `environment`'s GUNICORN_* variables."""
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    command = [gunicorn, "-c", "gunicorn.conf.py", "operator_site.wsgi"]
    return start_process_on(test_class, command, port=port, environment=environment, log=log)


def start_gunicorn(
    test_class: Any, *, environment: dict[str, str], port: int, log: Path, workers: int = 2, threads: int = 1
) -> subprocess.Popen:
    """gunicorn serving the real WSGI application on 127.0.0.1:`port` (gthread workers when `threads` > 1)."""
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "operator_site.wsgi",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=BASE_DIR,
        env=environment,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    test_class.addClassCleanup(stop, process)
    wait_for_port(port, process, log)
    return process


def start_two_servers(test_class: Any, workdir: Path, *, seed: str, **more: str) -> tuple[dict[str, str], str]:
    """Servers "a" and "b" of one service; their URLs, and what `seed` printed.

    Both have the same secrets and one public origin (a's, as behind a load balancer),
    one database and one Redis, and each a var/ folder of its own (`workdir`/var-a, var-b);
    `seed` is run at a once migrated, before either serves. `more` adds to both environments.
    """
    port_a, port_b = free_port(), free_port()
    urls = {"a": f"http://127.0.0.1:{port_a}", "b": f"http://127.0.0.1:{port_b}"}
    database_url, redis_url = database_url_for(test_class, workdir), redis_url_for(test_class, workdir)
    shared = server_environment(urls["a"], DATABASE_URL=database_url, REDIS_URL=redis_url, **more)
    environments: dict[str, dict[str, str]] = {}
    for name in ("a", "b"):
        var_dir = workdir / f"var-{name}"
        var_dir.mkdir()
        environments[name] = {**shared, "OPERATOR_VAR_DIR": str(var_dir)}
    manage("migrate", "--noinput", environment=environments["a"])
    seeded = manage("shell", "-c", seed, environment=environments["a"])
    for name, port in (("a", port_a), ("b", port_b)):
        start_gunicorn(test_class, environment=environments[name], port=port, log=workdir / f"gunicorn-{name}.log")
    return urls, seeded.stdout
