"""The rules a production deployment must meet, as one pure function over settings values.

Settings raise at start-up when `OPERATOR_ENV=production` breaks one of them;
`operator_site.checks` reports the same rules by id under `manage.py check
--deploy` in any mode (docs/deploy.md, "Production mode").
"""

from dataclasses import dataclass

from operator_site.settings.env import Secret

SQLITE_ENGINE = "django.db.backends.sqlite3"

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


def production_problems(*, secrets: list[Secret], base_url: str, database_engine: str, redis_url: str) -> list[Problem]:
    """Every rule of production mode the given values break, in a fixed order."""
    problems = [_secret_problem(secret) for secret in secrets]
    found = [problem for problem in problems if problem is not None]
    if not base_url.startswith("https://"):
        found.append(Problem("operator.E010", "OPERATOR_BASE_URL", f"must be an https origin, got {base_url}"))
    if database_engine == SQLITE_ENGINE:
        found.append(
            Problem("operator.E011", "DATABASE_URL", "must name a PostgreSQL database; SQLite serves one machine")
        )
    if not redis_url:
        found.append(Problem("operator.E012", "REDIS_URL", "must be set: limits and caches are shared through Redis"))
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
