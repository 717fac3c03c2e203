"""Shared test plumbing: real-component switches, schema validation and the limiters' clock.

Tests that need a real browser, Node.js or Redis skip when it is missing on a developer
machine. CI names the components each run must have in
OPERATOR_REQUIRE_REAL_SERVICES (comma-separated: `chromium`, `node`, `redis`,
`postgresql` for the server binaries the fault tests start, `caddy` for the
proxy of deploy/Caddyfile, `haproxy` for that of deploy/haproxy.cfg,
`prometheus` for the scraper of tests/e2e/test_prometheus.py, `hosts` for the
real MCP hosts of tests/e2e/hosts with tmux and `script`, or `all`),
which turns the matching skips into failures (docs/development/code-style.md#tests).
"""

import contextlib
import json
import logging
import os
import platform
import shutil
import subprocess
import time
import unittest
import uuid
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import jsonschema
from django.conf import settings
from django.db import connections
from django.test import override_settings

from operator_core import rate_limits

# Copies of the published schemas, kept in the checkout so the suite stands
# alone (tests/schemas/README.md says where each comes from).
SCHEMAS_DIR = Path(__file__).resolve().parent / "schemas"
MCP_SCHEMA_PATH = SCHEMAS_DIR / "mcp-2026-07-28.schema.json"
SERVER_CARD_SCHEMA_PATH = SCHEMAS_DIR / "server-card.schema.json"
CHROMIUM_PATH = shutil.which("chromium") or "/usr/bin/chromium"
# Headless, and nothing the browser would fetch or start on its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REQUIRED_COMPONENTS = {
    name.strip() for name in os.environ.get("OPERATOR_REQUIRE_REAL_SERVICES", "").split(",") if name.strip()
}


def require(condition: bool, reason: str, *, component: str) -> None:
    """Skip the calling test when `condition` is false, or fail it when CI requires `component`."""
    if condition:
        return
    if component in REQUIRED_COMPONENTS or "all" in REQUIRED_COMPONENTS:
        raise AssertionError(f"required real component missing under CI: {reason}")
    raise unittest.SkipTest(reason)


def require_chromium() -> str:
    require(os.path.exists(CHROMIUM_PATH), "Debian's chromium is not installed", component="chromium")
    return CHROMIUM_PATH


@contextlib.contextmanager
def sync_playwright() -> Iterator[Any]:
    """Playwright's sync API, closing the database connections opened while it ran.

    Its event loop runs in the test's thread, so asgiref's Local keeps Django's
    connections per context there: a query made inside the block opens a connection
    of its own, which the block's end would leave open on PostgreSQL for the rest of
    the run (and DROP DATABASE then fails).
    """
    from playwright.sync_api import sync_playwright as playwright_session

    with playwright_session() as playwright:
        try:
            yield playwright
        finally:
            connections.close_all()


def require_node(package_dir: Path, *, minimum_major: int = 20) -> str:
    """The `node` on PATH, at least `minimum_major`, with `package_dir`'s packages installed (`npm ci`)."""
    node = shutil.which("node")
    require(node is not None, "Node.js is not installed", component="node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = int(version.lstrip("v").split(".")[0] or 0) if version.startswith("v") else 0
    require(major >= minimum_major, f"Node.js {version or '?'} is older than {minimum_major}", component="node")
    require(
        (package_dir / "node_modules" / ".package-lock.json").exists(),
        f"the npm packages of {package_dir.name} are not installed (npm ci in that folder)",
        component="node",
    )
    return node


def require_hosts(package_dir: Path) -> dict[str, str]:
    """The real hosts installed in `package_dir` (`npm ci`), and the terminals that drive them: name -> path."""
    require_node(package_dir)
    paths: dict[str, str] = {}
    for name in ("tmux", "script"):
        path = shutil.which(name)
        require(path is not None, f"{name} is not installed", component="hosts")
        paths[name] = path or name
    binaries = package_dir / "node_modules" / ".bin"
    for name in ("gemini", "mcp-remote"):
        require((binaries / name).exists(), f"{name} is not installed in {package_dir.name}", component="hosts")
        paths[name] = str(binaries / name)
    # Installed without scripts, Claude Code's launcher is a placeholder: its native build is run directly.
    machine = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    claude = package_dir / "node_modules" / "@anthropic-ai" / f"claude-code-linux-{machine}" / "claude"
    require(claude.exists(), f"Claude Code's native build for linux-{machine} is not installed", component="hosts")
    paths["claude"] = str(claude)
    return paths


def require_redis_url() -> str:
    url = os.environ.get("REDIS_URL", "")
    require(bool(url), "REDIS_URL is not set", component="redis")
    return url


@cache
def _schema(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@cache
def compiled_validator(path: Path, definition: str) -> jsonschema.protocols.Validator:
    """A validator for `$defs/<definition>` of the schema at `path`, checked and built once.

    `jsonschema.validate` re-checks the whole schema against its metaschema on every
    call, which for the 181 KB MCP schema cost about 150 ms per response validated.
    """
    schema = {"$ref": f"#/$defs/{definition}", **_schema(path)}
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def validate_against_mcp_schema(instance: Any, definition: str) -> None:
    """Validate `instance` against `$defs/<definition>` of the official MCP 2026-07-28 schema."""
    compiled_validator(MCP_SCHEMA_PATH, definition).validate(instance)


def validate_server_card(instance: Any) -> None:
    compiled_validator(SERVER_CARD_SCHEMA_PATH, "ServerCard").validate(instance)


def type_arrays(schema: Any, path: str = "") -> list[str]:
    """The JSON pointers in `schema` whose `type` is an array (`["string", "null"]`).

    Tool schemas express "may be null" with `anyOf` instead (docs/tools.md "Null values").
    """
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(path or "/")
        for key, value in schema.items():
            found += type_arrays(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += type_arrays(value, f"{path}/{index}")
    return found


class PinnedClock:
    """A clock that stands still until told to move: `advance(seconds)`."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextlib.contextmanager
def pinned_clock(at: float | None = None) -> Iterator[PinnedClock]:
    """Stop the clock of every rate limiter (`operator_core.rate_limits.clock`) at `at`, by default now.

    Every count of the block then falls at the same moment, inside one window,
    however slow the machine; `advance` moves to a later one. On Redis the
    counter's expiry is set from this clock, so pin it at or after the real time.
    """
    pinned = PinnedClock(time.time() if at is None else at)
    with mock.patch.object(rate_limits, "clock", pinned):
        yield pinned


def own_cache_keys() -> override_settings:
    """Settings giving the default cache a key prefix of its own: counts start at zero and stay private.

    Every rate limit counts in the cache, which on Redis is shared by the suite's
    parallel processes and outlives a run; `cache.clear()` would wipe the other
    processes' counts mid-test. The suite's runner (tests/runner.py) enters it for every test.
    """
    return override_settings(
        CACHES={"default": {**settings.CACHES["default"], "KEY_PREFIX": f"test:{uuid.uuid4().hex}:"}}
    )


def without_oauth_rate_limits() -> override_settings:
    """Limits out of reach, for tests that send hundreds of OAuth requests from one address on purpose.

    tests/oauth/test_limits.py checks the limits themselves.
    """
    out_of_reach = 1_000_000
    limits = (
        "oauth_token_requests_per_minute",
        "oauth_token_requests_per_client_per_minute",
        "oauth_authorizations_per_minute",
        "oauth_revocations_per_minute",
        "oauth_registrations_per_hour",
    )
    return override_settings(OPERATOR={**settings.OPERATOR, **dict.fromkeys(limits, out_of_reach)})


# The HTTP clients' loggers: one INFO line per request otherwise (the MCP SDK's client logs through httpx2).
HTTP_CLIENT_LOGGERS = ("httpx", "httpx2")
# DOT's Client ID Metadata Document fetcher: one INFO line per document refused.
CIMD_LOGGER = "oauth2_provider.cimd"


def quiet_loggers(add_cleanup: Callable[..., object], *names: str) -> None:
    """Raise the loggers `names` to WARNING until `add_cleanup`'s cleanups run (a test's or a class's).

    For loggers that report each request at INFO: the test reads the outcome,
    and a failure still surfaces as an assertion or a warning.
    """
    for name in names:
        logger = logging.getLogger(name)
        add_cleanup(logger.setLevel, logger.level)
        logger.setLevel(logging.WARNING)
