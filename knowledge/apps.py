from django.apps import AppConfig
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created


def _register_search_functions(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    """SQLite's search index calls KEYED_TEXT_FUNCTION (knowledge/search/schema.py): every connection has it."""
    if connection.vendor == "sqlite":
        from knowledge.search.schema import KEYED_TEXT_FUNCTION, keyed_text

        connection.connection.create_function(KEYED_TEXT_FUNCTION, 2, keyed_text, deterministic=True)


class KnowledgeConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledge"

    def ready(self) -> None:
        connection_created.connect(_register_search_functions, dispatch_uid="knowledge_search_functions")
