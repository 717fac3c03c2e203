from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _register_search_functions(sender: object, connection: object, **kwargs: object) -> None:
    """SQLite's search index calls KEYED_TEXT_FUNCTION (organizations/search_schema.py): every connection has it."""
    if connection.vendor == "sqlite":
        from organizations.search_schema import KEYED_TEXT_FUNCTION, keyed_text

        connection.connection.create_function(KEYED_TEXT_FUNCTION, 2, keyed_text, deterministic=True)


class OrganizationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "organizations"

    def ready(self) -> None:
        connection_created.connect(_register_search_functions, dispatch_uid="organizations_search_functions")
