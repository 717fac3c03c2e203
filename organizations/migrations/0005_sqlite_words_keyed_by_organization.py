"""SQLite's search index keys every word by its organization (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 2 with version 3
(organizations/search_schema.py) and indexes every existing chunk again.
PostgreSQL keeps version 2: nothing changes there.
"""

from django.db import migrations


def _replace(old: int, new: int):
    def replace(apps, schema_editor):
        from organizations.search_schema import install_search_schema, uninstall_search_schema

        if schema_editor.connection.vendor != "sqlite":
            return
        uninstall_search_schema(schema_editor.connection, version=old)
        install_search_schema(schema_editor.connection, version=new)

    return replace


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0004_source_listing_order"),
    ]

    operations = [
        migrations.RunPython(_replace(2, 3), _replace(3, 2), elidable=False),
    ]
