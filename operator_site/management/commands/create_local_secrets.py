"""`manage.py create_local_secrets`: the development secret key and keys under var/ (docs/configuration.md)."""

from typing import Any

from django.core.management.base import BaseCommand

from operator_site.local_secrets import create_missing_local_secrets


class Command(BaseCommand):
    help = (
        "Create the secret key, the OAuth signing key, the LTI key and the identity provider key where "
        "settings look for them "
        "(under var/ unless paths are given), once, with owner-only permissions. For development: "
        "production gives every secret explicitly (docs/deploy.md)."
    )
    # Runs before the secrets exist, so the checks that want them must not stop it.
    requires_system_checks: list[str] = []

    def handle(self, *args: Any, **options: Any) -> None:
        created = create_missing_local_secrets()
        self.stdout.write(f"Created {', '.join(created)}." if created else "Every local secret exists already.")
