"""System checks for the deployment rules and the secrets (docs/deploy.md, "Production mode").

Under `manage.py check --deploy` every rule of `settings.production` is
reported by its id, in any mode, so an operator sees what production mode
would refuse. Without `--deploy`, secrets that are missing or do not parse are
reported: a warning in development (`create_local_secrets` or `migrate` makes
them), an error for a key that is given but is no RSA private key.
"""

from typing import Any

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings
from django.core import checks

from operator_core.conf import operator_settings
from operator_site.settings.production import production_problems

KEY_SECRETS = ("OPERATOR_SIGNING_KEY", "OPERATOR_LTI_KEY")


@checks.register(checks.Tags.security, deploy=True)
def check_production_rules(**_: Any) -> list[checks.CheckMessage]:
    problems = production_problems(
        secrets=settings.OPERATOR_SECRETS,
        secret_files=settings.OPERATOR_SECRET_FILES,
        base_url=settings.BASE_URL,
        database_engine=settings.DATABASES["default"]["ENGINE"],
        redis_url=settings.REDIS_URL,
        debug=settings.DEBUG,
        email_host=settings.EMAIL_HOST,
        metrics_token=operator_settings().metrics_token,
    )
    return [checks.Error(problem.line(), id=problem.check_id) for problem in problems]


@checks.register(checks.Tags.security)
def check_secrets(**_: Any) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    for secret in settings.OPERATOR_SECRETS:
        if not secret.value:
            messages.append(
                checks.Warning(
                    f"{secret.name} is not set and {secret.path} does not exist",
                    hint="Run `manage.py create_local_secrets` (make run does), or give the secret (docs/deploy.md).",
                    id="operator.W001",
                )
            )
        elif secret.name in KEY_SECRETS and not _is_rsa_private_key(secret.value):
            messages.append(checks.Error(f"{secret.name} is not an RSA private key in PEM form", id="operator.E004"))
    return messages


def _is_rsa_private_key(pem: str) -> bool:
    try:
        return isinstance(load_pem_private_key(pem.encode(), password=None), RSAPrivateKey)
    except (ValueError, TypeError):
        return False
