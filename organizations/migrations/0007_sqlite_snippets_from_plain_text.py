"""SQLite's search index reads snippets from the chunk table's plain text (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 4 (version 3's) with version 5
(organizations/search_schema.py) and indexes every existing chunk again.
PostgreSQL keeps version 4: nothing changes there.
"""

from django.db import migrations


def _change(old: int, new: int):
    def change(apps, schema_editor):
        from organizations.search_schema import change_search_schema

        change_search_schema(schema_editor.connection, old=old, new=new)

    return change


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0006_postgres_index_keys_source_digit"),
    ]

    operations = [
        migrations.RunPython(_change(4, 5), _change(5, 4), elidable=False),
    ]
