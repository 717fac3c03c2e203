"""PostgreSQL's search index also keys each chunk by its source's first hex digit.

Replaces PostgreSQL's index structures of version 3 with version 4's
(frozen in organizations/migrations/_search/; docs/development/architecture.md#search): the
keys function, the GIN index built from it over every existing chunk, and the
search function. The search vector column stays, so no row is rewritten.
SQLite keeps version 3: nothing changes there.
"""

from django.db import migrations

from organizations.migrations._search import run_sql, v2, v4


class Migration(migrations.Migration):

    dependencies = [
        ("organizations", "0005_sqlite_words_keyed_by_organization"),
    ]

    operations = [
        run_sql(
            forward={"postgresql": v2.POSTGRESQL_INDEX_UNINSTALL + v4.POSTGRESQL_INDEX_INSTALL},
            backward={"postgresql": v4.POSTGRESQL_INDEX_UNINSTALL + v2.POSTGRESQL_INDEX_INSTALL},
        ),
    ]
