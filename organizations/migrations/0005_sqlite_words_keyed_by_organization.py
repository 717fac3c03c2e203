"""SQLite's search index keys every word by its organization (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 2 with version 3
(organizations/search_schema.py) and indexes every existing chunk again.
PostgreSQL keeps version 2: nothing changes there.
"""

from django.db import migrations


def _change(old: int, new: int):
    def change(apps, schema_editor):
        from organizations.search_schema import change_search_schema

        change_search_schema(schema_editor.connection, old=old, new=new)

    return change


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0004_source_listing_order"),
    ]

    operations = [
        migrations.RunPython(_change(2, 3), _change(3, 2), elidable=False),
    ]
