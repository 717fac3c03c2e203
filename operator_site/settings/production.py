"""The rules a production deployment must meet, as one function over settings values.

Settings raise at start-up when `OPERATOR_ENV=production` breaks one of them,
one line per problem; `operator_site.checks` reports the same rules by id under
`manage.py check --deploy` in any mode (docs/deploy.md, "Production mode").
The only I/O is reading the mode of each secret file.
"""

import stat
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from operator_site.settings.env import Secret
from operator_site.settings.metrics import METRICS_TOKEN_MIN_LENGTH

SQLITE_ENGINE = "django.db.backends.sqlite3"
# Permission bits a secret file must not have: any access by group or others.
OPEN_TO_OTHERS = stat.S_IRWXG | stat.S_IRWXO

# operator.E004 is the check that a given RSA key parses (operator_site/checks.py).
SECRET_CHECK_IDS = {
    "DJANGO_SECRET_KEY": "operator.E001",
    "OPERATOR_SIGNING_KEY": "operator.E002",
    "OPERATOR_LTI_KEY": "operator.E003",
    "OPERATOR_IDENTITY_PROVIDER_KEY": "operator.E005",
}


@dataclass(frozen=True)
class Problem:
    check_id: str
    variable: str
    message: str

    def line(self) -> str:
        return f"{self.variable}: {self.message}"


class ProductionRefused(ImproperlyConfigured):
    """Production mode refuses these settings: a heading line, then one line per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        lines = [problem.line() for problem in problems]
        super().__init__("\n".join(["production mode (OPERATOR_ENV=production) refuses these settings:", *lines]))


def production_problems(
    *,
    secrets: list[Secret],
    secret_files: list[tuple[str, Path]],
    base_url: str,
    database_engine: str,
    redis_url: str,
    debug: bool,
    email_host: str,
    metrics_token: str = "",
) -> list[Problem]:
    """Every rule of production mode the given values break, in a fixed order.

    `secret_files` are the files any secret was read from, each with the variable that named it.
    """
    problems = [_secret_problem(secret) for secret in secrets]
    found = [problem for problem in problems if problem is not None]
    found += _open_file_problems(secret_files)
    if not base_url.startswith("https://"):
        found.append(Problem("operator.E010", "OPERATOR_BASE_URL", f"must be an https origin, got {base_url}"))
    if database_engine == SQLITE_ENGINE:
        found.append(
            Problem("operator.E011", "DATABASE_URL", "must name a PostgreSQL database; SQLite serves one machine")
        )
    if not redis_url:
        found.append(Problem("operator.E012", "REDIS_URL", "must be set: limits and caches are shared through Redis"))
    if debug:
        found.append(
            Problem("operator.E013", "DJANGO_DEBUG", "must be false: debug pages show settings and source to anyone")
        )
    if not email_host:
        found.append(
            Problem(
                "operator.E014",
                "EMAIL_HOST",
                "must name an SMTP server: without one, verification codes would be printed in the logs",
            )
        )
    if metrics_token and len(metrics_token) < METRICS_TOKEN_MIN_LENGTH:
        found.append(
            Problem(
                "operator.E016",
                "OPERATOR_METRICS_TOKEN",
                f"must be at least {METRICS_TOKEN_MIN_LENGTH} characters: generate one (docs/operations.md#metrics)",
            )
        )
    return found


def _secret_problem(secret: Secret) -> Problem | None:
    check_id = SECRET_CHECK_IDS[secret.name]
    if secret.is_explicit:
        return None
    if secret.origin == "missing file":
        return Problem(check_id, secret.path_name, f"names a missing file: {secret.path}")
    if secret.origin == "development":
        return Problem(
            check_id,
            secret.name,
            f"is the development value from {secret.path}; give {secret.name} or {secret.path_name}",
        )
    return Problem(check_id, secret.name, f"is not set; give {secret.name} or {secret.path_name}")


def _open_file_problems(secret_files: list[tuple[str, Path]]) -> list[Problem]:
    found = []
    for variable, path in secret_files:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            continue  # a missing file is its own problem, reported where it is read
        if mode & OPEN_TO_OTHERS:
            found.append(
                Problem(
                    "operator.E015",
                    variable,
                    f"names {path}, which group or others may open (mode {mode:04o}); "
                    "make it readable by the app's user only (chmod 400)",
                )
            )
    return found
