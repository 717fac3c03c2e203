"""The organization joins the search index (docs/development/architecture.md#search).

Each chunk gets a copy of its source's organization, filled from the sources
here; then the search structures of version 1 are replaced by version 2
(frozen in organizations/migrations/_search/): on PostgreSQL a search vector with
term-frequency tiers and a GIN index whose keys are its lexemes behind the
organization's key, on SQLite an FTS5 table that also indexes a
per-organization token. Building them indexes every existing chunk.
"""

import django.db.models.deletion
from django.db import migrations, models

from organizations.migrations._search import run_sql, v1, v2


def copy_organizations(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "UPDATE organizations_sourcechunk SET organization_id = ("
            "SELECT organization_id FROM organizations_source WHERE organizations_source.id = "
            "organizations_sourcechunk.source_id)"
        )


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0002_search_and_indexes'),
    ]

    operations = [
        # The search structures go first: on SQLite, adding a column rebuilds the
        # chunk table, which would drop the triggers and orphan the FTS5 table.
        run_sql(forward=v1.UNINSTALL, backward=v1.INSTALL),
        migrations.AddField(
            model_name='sourcechunk',
            name='organization',
            field=models.ForeignKey(db_index=False, editable=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='organizations.organization'),
        ),
        migrations.RunPython(copy_organizations, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name='sourcechunk',
            name='organization',
            field=models.ForeignKey(db_index=False, editable=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='organizations.organization'),
        ),
        run_sql(forward=v2.INSTALL, backward=v2.UNINSTALL),
    ]
