"""SQLite's search index keys every word by its organization (docs/development/architecture.md#search).

Replaces SQLite's search structures of version 2 with version 3
(frozen in organizations/migrations/_search/) and indexes every existing chunk again.
PostgreSQL keeps version 2: nothing changes there.
"""

from django.db import migrations

from organizations.migrations._search import run_sql, v2, v3


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0004_source_listing_order"),
    ]

    operations = [
        run_sql(
            forward={"sqlite": v2.SQLITE_UNINSTALL + v3.SQLITE_INSTALL},
            backward={"sqlite": v3.SQLITE_UNINSTALL + v2.SQLITE_INSTALL},
        ),
    ]
