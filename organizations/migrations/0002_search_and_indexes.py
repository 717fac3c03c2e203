"""Indexes for the selectors' filters, and the full-text search structures.

The search structures depend on the database vendor (organizations/search_schema.py,
version 1): a generated tsvector column with a GIN index on PostgreSQL, an FTS5
external-content table with sync triggers on SQLite. Migration 0003 replaces them.
"""

from django.db import migrations, models


def install_search(apps, schema_editor):
    from organizations.search_schema import install_search_schema

    install_search_schema(schema_editor.connection, version=1)


def uninstall_search(apps, schema_editor):
    from organizations.search_schema import uninstall_search_schema

    uninstall_search_schema(schema_editor.connection, version=1)


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
        migrations.RunPython(install_search, uninstall_search, elidable=False),
    ]
