"""The search schema's versions as the migrations ran them, frozen (docs/development/architecture.md#search).

Each module `vN` holds the SQL of search schema version N, written out in full,
or imported from the earlier version it keeps unchanged. Never edit one: an old
migration must run tomorrow exactly what it ran when it shipped, and
tests/knowledge/test_frozen_search_sql.py pins every statement by its digest. A
new version gets a module of its own, and the current version's SQL lives in
knowledge/search/schema.py. The leading underscore keeps Django's migration
loader from reading this package as a migration.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor


def run_sql(*, forward: dict[str, tuple[str, ...]], backward: dict[str, tuple[str, ...]]) -> migrations.RunPython:
    """An operation running the connection's vendor's statements of `forward`, or `backward` when reversed.

    A vendor without statements runs nothing.
    """

    def run(statements: dict[str, tuple[str, ...]], schema_editor: BaseDatabaseSchemaEditor) -> None:
        with schema_editor.connection.cursor() as cursor:
            for statement in statements.get(schema_editor.connection.vendor, ()):
                cursor.execute(statement)

    return migrations.RunPython(
        lambda apps, schema_editor: run(forward, schema_editor),
        lambda apps, schema_editor: run(backward, schema_editor),
        elidable=False,
    )
