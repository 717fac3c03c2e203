"""SQLite's search index reads snippets from the chunk table's plain text (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 4 (version 3's) with version 5
(organizations/search_schema.py) and indexes every existing chunk again.
PostgreSQL keeps version 4: nothing changes there.
"""

from django.db import migrations

from organizations.search_schema import search_schema_migration


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0006_postgres_index_keys_source_digit"),
    ]

    operations = [
        search_schema_migration(old=4, new=5),
    ]
