"""SQLite's search index reads snippets from the chunk table's plain text (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 4 (version 3's) with version 5
(frozen in organizations/migrations/_search/) and indexes every existing chunk again.
PostgreSQL keeps version 4: nothing changes there.
"""

from django.db import migrations

from organizations.migrations._search import run_sql, v4, v5


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0006_postgres_index_keys_source_digit"),
    ]

    operations = [
        run_sql(
            forward={"sqlite": v4.SQLITE_UNINSTALL + v5.SQLITE_INSTALL},
            backward={"sqlite": v5.SQLITE_UNINSTALL + v4.SQLITE_INSTALL},
        ),
    ]
