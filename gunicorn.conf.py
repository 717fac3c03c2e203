"""gunicorn configuration: `gunicorn -c gunicorn.conf.py operator_site.wsgi` (docs/deploy.md).

Every value comes from a `GUNICORN_*` environment variable with a default that
suits a container (the table: docs/deploy.md#gunicorn-settings). Before any
worker starts, the master runs Django's system checks in a child process and
stops with one line per problem; why a child:
docs/development/decisions.md#operating.
"""

import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from gunicorn.http.body import ChunkedReader, LengthReader

_ROOT = Path(__file__).resolve().parent
_SETTINGS_MODULE = "operator_site.settings"
_TRUE = {"1", "true", "yes", "on"}
_CHECK_TIMEOUT_SECONDS = 120
# How long a worker reads and drops what is left of a request after its answer (post_request).
_LINGER_SECONDS = 2.0


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        sys.exit(f"{name} must be an integer, got {raw!r}")


def _default_workers() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(2 * cores + 1, 8)


chdir = str(_ROOT)
wsgi_app = "operator_site.wsgi"

bind = [os.environ.get("GUNICORN_BIND") or f"0.0.0.0:{_int('PORT', 8000)}"]
workers = _int("GUNICORN_WORKERS", _default_workers())
# Sync workers by default: a request is short work on the CPU and the database, and
# threads cost more CPU per request even over kept-alive proxy connections, while
# two of them only double what a slow client must hold (docs/deploy.md#gunicorn-settings).
threads = _int("GUNICORN_THREADS", 1)
worker_class = "gthread" if threads > 1 else "sync"
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
max_requests = _int("GUNICORN_MAX_REQUESTS", 0)
max_requests_jitter = max_requests // 10
proc_name = "service-operator"
# The heartbeat files live in memory when the host offers it (containers often have a slow /tmp).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108 (a folder, not a file name)
# No control socket: nothing here uses `gunicornc`, and the image's user has no home for one.
control_socket_disable = True

_access_log = os.environ.get("GUNICORN_ACCESS_LOG", "").strip().lower() in _TRUE
accesslog = "-" if _access_log else None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")


class JsonFormatter(logging.Formatter):
    """One JSON object per line, for gunicorn's own messages when LOG_FORMAT=json."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


if os.environ.get("LOG_FORMAT", "").strip().lower() == "json":
    # Replaces gunicorn's whole logging configuration: the master's and the
    # workers' gunicorn messages become JSON lines like the application's.
    logconfig_dict = {
        "root": {"level": "WARNING", "handlers": []},
        "loggers": {
            "gunicorn.error": {"level": loglevel.upper(), "handlers": ["stderr"], "propagate": False},
            "gunicorn.access": {
                "level": "INFO" if _access_log else "CRITICAL",
                "handlers": ["stdout"],
                "propagate": False,
            },
        },
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
            "stdout": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"},
        },
        "formatters": {"json": {"()": JsonFormatter}},
    }

# Proxy headers. The application decides what it trusts from OPERATOR_TRUSTED_PROXIES and
# OPERATOR_PROXY_ADDRESSES (docs/configuration.md); gunicorn follows the same two. With no
# trusted proxy, gunicorn honours no forwarded header from anyone, loopback included. With
# one, only peers at the proxy addresses may set the scheme (X-Forwarded-Proto, which the
# proxy overwrites), and no forwarded WSGI variables are taken from anyone.
secure_scheme_headers = {"X-FORWARDED-PROTO": "https"}
forwarder_headers = ""
_proxy_addresses = os.environ.get("OPERATOR_PROXY_ADDRESSES", "127.0.0.1,::1")
forwarded_allow_ips = _proxy_addresses if _int("OPERATOR_TRUSTED_PROXIES", 0) > 0 else ""


def on_starting(server) -> None:
    """Prepare the metrics folder, then refuse to start, one line per problem, when the settings or a check fail."""
    _prepare_metrics_folder()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", _SETTINGS_MODULE)}
    try:
        result = subprocess.run(  # noqa: S603 (our own interpreter and file, no shell)
            [sys.executable, __file__, "--check"],
            cwd=_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=_CHECK_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        server.log.error(f"Not starting: the start-up checks took more than {_CHECK_TIMEOUT_SECONDS} seconds.")
        sys.exit(1)
    for line in result.stdout.splitlines():
        if line.strip():
            server.log.warning(line)
    problems = [line for line in result.stderr.splitlines() if line.strip()]
    if result.returncode != 0:
        for line in problems or [f"start-up checks failed with exit status {result.returncode}"]:
            server.log.error(line)
        server.log.error("Not starting: fix the settings above (docs/configuration.md).")
        sys.exit(1)


def post_request(worker, req, environ, resp) -> None:
    """End a closing connection once its answer is whole; first, if its body was left unread, read and drop it.

    An answer given before the body is read (413, 411, the MCP endpoint's 401) leaves
    the body on its way. Closed with unread bytes, the socket sends a reset, which can
    reach the proxy before it has read the answer: the client then got the proxy's 502
    (deploy/haproxy.cfg) or nothing (RFC 9112 §9.6). gunicorn's own lingering close stops
    after 64 KiB; this one is bounded by time only, so a large body from a proxy on the
    same network is read to its end, and a slow client holds the worker at most
    _LINGER_SECONDS. Any other request has nothing more to send: reading stops at once,
    so a client that keeps its socket open after its answer holds no worker, where
    gunicorn's own close would wait up to 2 seconds for it.
    """
    connection = environ.get("gunicorn.socket")
    if connection is None or resp is None or not resp.headers_sent or not resp.should_close():
        return
    try:
        connection.shutdown(socket.SHUT_WR)  # the answer is whole: the proxy may pass it on now
        if _body_left_unread(req):
            _drop_what_arrives(connection)
        # gunicorn's close, which follows, then reads only what has already arrived.
        connection.shutdown(socket.SHUT_RD)
    except OSError:  # the peer went away: the worker's own close follows
        return


def _body_left_unread(req) -> bool:
    """Whether the request's body has not been read to its end, from the state of gunicorn's body reader.

    A request without a body has a reader of length 0 (gunicorn.http.message.Request).
    A reader this does not know counts as unread: it costs a linger, never a reset.
    """
    body = req.body
    if body.failed:  # reading it broke off: where it ends is unknown
        return True
    if isinstance(body.reader, LengthReader):
        return body.reader.length > 0
    if isinstance(body.reader, ChunkedReader):
        return body.reader.parser is not None
    return True


def _drop_what_arrives(connection: socket.socket) -> None:
    """Read and drop until the client closes, for at most _LINGER_SECONDS."""
    deadline = time.monotonic() + _LINGER_SECONDS
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            connection.settimeout(remaining)
            if not connection.recv(65536):
                return
    except OSError:  # the peer went away, or the time is up (TimeoutError)
        return


def _prepare_metrics_folder() -> None:
    """Every worker writes its metrics to files in one folder, so that a scrape, which reaches one
    worker, reports the sum of all (docs/development/decisions.md#metrics). Set before any worker
    imports prometheus_client: a folder of this master's own unless the deployment names one,
    emptied, since counts of a previous run would be added to this one's.
    """
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="operator-metrics-", dir=worker_tmp_dir)
    for stale in Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).glob("*.db"):
        stale.unlink()


def child_exit(server, worker) -> None:
    """Drop the live gauges of a worker that ended; its counts stay in the sum."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_fork(server, worker) -> None:
    """Set up tracing in each worker when OTEL_* asks: the exporter's thread does not survive a fork."""
    from operator_core.telemetry.tracing import configure_tracing

    configure_tracing()


def _check() -> int:
    """Run in the child: import the settings, run the checks, print one line per finding.

    Errors go to stderr and make the exit status 1; warnings go to stdout.
    """
    sys.path.insert(0, str(_ROOT))
    import django
    from django.core import checks
    from django.core.exceptions import ImproperlyConfigured

    production = os.environ.get("OPERATOR_ENV", "development").strip().lower() == "production"
    try:
        django.setup()
        messages = checks.run_checks(include_deployment_checks=production)
    except ImproperlyConfigured as error:
        # Production mode's refusal is a heading then one line per problem: each stays a line.
        heading, *problems = [_one_line(line) for line in str(error).splitlines() if line.strip()] or [""]
        print(f"Configuration error: {heading}", file=sys.stderr)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    except Exception as error:  # a broken import or value: still one line, never a traceback
        print(f"Configuration error: {type(error).__name__}: {_one_line(error)}", file=sys.stderr)
        return 1
    failed = False
    for message in messages:
        if message.is_silenced():
            continue
        where = f"{message.obj}: " if message.obj is not None else ""
        text = _one_line(f"{where}{message.id}: {message.msg}")
        if message.hint:
            text += f" (hint: {_one_line(message.hint)})"
        if message.is_serious():
            failed = True
            print(text, file=sys.stderr)
        else:
            print(text)
    return 1 if failed else 0


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


if __name__ == "__main__" and sys.argv[1:] == ["--check"]:
    sys.exit(_check())
