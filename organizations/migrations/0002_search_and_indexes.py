"""Indexes for the selectors' filters, and the full-text search structures.

The search structures depend on the database vendor (version 1, frozen in
organizations/migrations/_search/v1.py): a generated tsvector column with a GIN index on PostgreSQL, an FTS5
external-content table with sync triggers on SQLite. Migration 0003 replaces them.
"""

from django.db import migrations, models

from organizations.migrations._search import run_sql, v1


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0001_initial'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='module',
            index=models.Index(fields=['organization', 'status', '-updated_at'], name='module_org_status_idx'),
        ),
        migrations.AddIndex(
            model_name='source',
            index=models.Index(fields=['organization', 'origin'], name='source_org_origin_idx'),
        ),
        run_sql(forward=v1.INSTALL, backward=v1.UNINSTALL),
    ]
