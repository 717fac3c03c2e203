from django.apps import AppConfig


class OperatorSiteConfig(AppConfig):
    """Installed only for the project-wide management commands (no models)."""

    name = "operator_site"
