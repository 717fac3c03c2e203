"""The knowledge models come over from the organizations app, their tables and rows untouched.

State only: the tables keep their names (each model's `db_table`), their rows,
indexes, constraints and search structures; organizations' migration 0008 then
drops the models from that app's state. The content types of the four models
move to this app, so the permissions and admin log entries that point at them
follow (docs/development/architecture.md#layers).
"""

import uuid

import django.db.models.deletion
from django.db import migrations, models

MOVED_MODELS = ("module", "modulesection", "source", "sourcechunk")


def move_content_types(apps, schema_editor, *, source, target):
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    for model in MOVED_MODELS:
        # A row already under the target (a database whose content types were made anew) stays as it is.
        if not content_types.filter(app_label=target, model=model).exists():
            content_types.filter(app_label=source, model=model).update(app_label=target)


def forward(apps, schema_editor):
    move_content_types(apps, schema_editor, source="organizations", target="knowledge")


def backward(apps, schema_editor):
    move_content_types(apps, schema_editor, source="knowledge", target="organizations")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('organizations', '0007_sqlite_snippets_from_plain_text'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Source',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('title', models.CharField(max_length=300)),
                        ('kind', models.CharField(choices=[('file', 'File'), ('url', 'URL'), ('text', 'Text')], max_length=8)),
                        ('origin', models.CharField(blank=True, max_length=1000)),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('processing', 'Processing'), ('processed', 'Processed'), ('failed', 'Failed')], default='pending', max_length=12)),
                        ('text', models.TextField(blank=True)),
                        ('processed_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sources', to='organizations.organization')),
                    ],
                    options={
                        'db_table': 'organizations_source',
                        'indexes': [
                            models.Index(fields=['organization', 'status', '-processed_at', '-id'], name='source_org_status_idx'),
                            models.Index(fields=['organization', 'origin'], name='source_org_origin_idx'),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name='Module',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('title', models.CharField(max_length=300)),
                        ('summary', models.TextField(blank=True)),
                        ('status', models.CharField(choices=[('draft', 'Draft'), ('published', 'Published'), ('archived', 'Archived')], default='draft', max_length=12)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='modules', to='organizations.organization')),
                        ('sources', models.ManyToManyField(blank=True, related_name='modules', to='knowledge.source')),
                    ],
                    options={
                        'db_table': 'organizations_module',
                        'indexes': [
                            models.Index(fields=['organization', '-updated_at'], name='module_org_updated_idx'),
                            models.Index(fields=['organization', 'status', '-updated_at'], name='module_org_status_idx'),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name='SourceChunk',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('index', models.PositiveIntegerField()),
                        ('text', models.TextField()),
                        ('organization', models.ForeignKey(db_index=False, editable=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='organizations.organization')),
                        ('source', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chunks', to='knowledge.source')),
                    ],
                    options={
                        'db_table': 'organizations_sourcechunk',
                        'ordering': ['source', 'index'],
                        'constraints': [models.UniqueConstraint(fields=('source', 'index'), name='one_chunk_per_source_index')],
                    },
                ),
                migrations.CreateModel(
                    name='ModuleSection',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('position', models.PositiveIntegerField()),
                        ('title', models.CharField(max_length=300)),
                        ('body', models.TextField(help_text='Markdown')),
                        ('module', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sections', to='knowledge.module')),
                    ],
                    options={
                        'db_table': 'organizations_modulesection',
                        'ordering': ['module', 'position'],
                        'constraints': [models.UniqueConstraint(fields=('module', 'position'), name='one_section_per_position')],
                    },
                ),
            ],
        ),
        migrations.RunPython(forward, backward, elidable=False),
    ]
