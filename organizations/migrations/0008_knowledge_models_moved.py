"""Modules, sources and chunks now belong to the knowledge app (knowledge/migrations/0001).

State only: their tables, rows and search structures stay as they are, under
the same names.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0007_sqlite_snippets_from_plain_text'),
        ('knowledge', '0001_models_from_organizations'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(model_name='modulesection', name='module'),
                migrations.RemoveField(model_name='source', name='organization'),
                migrations.RemoveField(model_name='sourcechunk', name='source'),
                migrations.RemoveField(model_name='sourcechunk', name='organization'),
                migrations.DeleteModel(name='Module'),
                migrations.DeleteModel(name='ModuleSection'),
                migrations.DeleteModel(name='Source'),
                migrations.DeleteModel(name='SourceChunk'),
            ],
        ),
    ]
