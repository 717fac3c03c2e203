"""PostgreSQL's search index also keys each chunk by its source's first hex digit.

Replaces PostgreSQL's index structures of version 3 with version 4's
(organizations/search_schema.py; docs/development/architecture.md#search): the
keys function, the GIN index built from it over every existing chunk, and the
search function. The search vector column stays, so no row is rewritten.
SQLite keeps version 3: nothing changes there.
"""

from django.db import migrations

from organizations.search_schema import search_schema_migration


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0005_sqlite_words_keyed_by_organization"),
    ]

    operations = [
        search_schema_migration(old=3, new=4),
    ]
