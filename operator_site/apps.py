from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate


class OperatorSiteConfig(AppConfig):
    """The wiring's own app: project-wide commands, deployment checks, development secrets, the admin's sign-in."""

    name = "operator_site"

    def ready(self) -> None:
        from django.contrib import admin

        from operator_site import checks  # noqa: F401  (registers the checks)
        from operator_site.admin_sign_in import LimitedAdminAuthenticationForm

        # The admin's sign-in counts against the service's sign-in limits (docs/operations.md#admin).
        admin.site.login_form = LimitedAdminAuthenticationForm

        if not settings.PRODUCTION:
            # Sent once per app with models (this one has none); creating is idempotent.
            post_migrate.connect(_create_local_secrets, dispatch_uid="operator_site.local_secrets")


def _create_local_secrets(**_: Any) -> None:
    # A development checkout that only ran `migrate` can serve: its secrets exist now.
    from operator_site.local_secrets import create_missing_local_secrets

    create_missing_local_secrets()
