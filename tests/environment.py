"""The environment the suite runs in: every variable of docs/configuration.md at its default.

The settings read the environment once, at import, so a variable the shell
holds (`OPERATOR_REFRESH_TOKEN_GRACE_SECONDS=0`, `OPERATOR_ENV=production`)
would change what every test sees. `manage.py test` calls
`neutralise_environment` before Django reads its settings: each documented
variable is removed, so the settings take their documented defaults, and the
servers some tests start (tests/live_servers.py) inherit the same environment.
A test that needs another value pins it (`override_settings`, or the
environment it gives its subprocess). Kept: what picks the services and files
the suite runs against (`KEPT`), which CI sets (.ci/run). Why:
docs/development/decisions.md#operating ("The suite depends on no shell").
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from pathlib import Path

CONFIGURATION_PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
# The origin every test expects (`make test` has always given it).
TEST_BASE_URL = "http://testserver"
KEPT = frozenset(
    {
        # The database and the cache the run is for: SQLite and local memory, or PostgreSQL and Redis.
        "DATABASE_URL",
        "REDIS_URL",
        # Where the development secrets are: `make test` creates them first, in the same environment.
        "OPERATOR_VAR_DIR",
        "DJANGO_SECRET_KEY",
        "DJANGO_SECRET_KEY_FILE",
        "OPERATOR_SIGNING_KEY",
        "OPERATOR_SIGNING_KEY_PATH",
        "OPERATOR_LTI_KEY",
        "OPERATOR_LTI_KEY_PATH",
    }
)
# A documented variable: a name in backticks with an underscore (`LOG_LEVEL`, not the level `INFO`).
_VARIABLE = re.compile(r"`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`")
# Named on the page, but a request's, never the environment's.
_NOT_VARIABLES = frozenset({"REMOTE_ADDR"})


def documented_variables() -> frozenset[str]:
    """Every environment variable docs/configuration.md names."""
    return frozenset(_VARIABLE.findall(CONFIGURATION_PAGE.read_text())) - _NOT_VARIABLES


def neutralise_environment(environ: MutableMapping[str, str]) -> None:
    """Remove every documented variable from `environ` but the kept ones, and set the suite's origin."""
    for name in documented_variables() - KEPT:
        environ.pop(name, None)
    environ["OPERATOR_BASE_URL"] = TEST_BASE_URL
