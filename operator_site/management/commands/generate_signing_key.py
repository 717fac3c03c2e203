"""`manage.py generate_signing_key`: print a new RSA signing key for a deployment (docs/deploy.md)."""

from typing import Any

from django.core.management.base import BaseCommand

from operator_core.signing_keys import generate_private_key_pem


class Command(BaseCommand):
    help = (
        "Print a new RSA private key (PEM) to standard output, for OPERATOR_SIGNING_KEY or "
        "OPERATOR_LTI_KEY. Give every app server the same one."
    )
    requires_system_checks: list[str] = []

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(generate_private_key_pem(), ending="")
