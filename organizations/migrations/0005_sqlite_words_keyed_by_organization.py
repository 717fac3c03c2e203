"""SQLite's search index keys every word by its organization (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 2 with version 3
(organizations/search_schema.py) and indexes every existing chunk again.
PostgreSQL keeps version 2: nothing changes there.
"""

from django.db import migrations

from organizations.search_schema import search_schema_migration


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0004_source_listing_order"),
    ]

    operations = [
        search_schema_migration(old=2, new=3),
    ]
