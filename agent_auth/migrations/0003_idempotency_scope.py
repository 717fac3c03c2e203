"""Idempotency records scoped to the caller's claim token, and a claim token that a repeated start replaces.

Records written before this migration are deleted: a start's record held the
claim token itself, readable by anyone who sent the same email under the same
key (issue #30). A repeat of a request made before the upgrade runs anew.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def forget_idempotency_records(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    apps.get_model("agent_auth", "IdempotencyRecord").objects.all().delete()


def bind_codes_to_first_tokens(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    # Every code so far was bound to its claim's token hash, which had never changed.
    apps.get_model("agent_auth", "Claim").objects.update(code_binding=models.F("token_hash"))


class Migration(migrations.Migration):
    dependencies = [
        ("agent_auth", "0002_verification_email"),
    ]

    operations = [
        migrations.RunPython(forget_idempotency_records, migrations.RunPython.noop),
        migrations.AddField(
            model_name="claim",
            name="code_binding",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(bind_codes_to_first_tokens, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="idempotencyrecord",
            name="one_idempotency_record_per_endpoint_key",
        ),
        migrations.AddField(
            model_name="idempotencyrecord",
            name="scope",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="idempotencyrecord",
            name="claim",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="agent_auth.claim",
            ),
        ),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="response_body",
            field=models.TextField(
                blank=True, help_text="A completion's answer, encrypted; readable only with the original body"
            ),
        ),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.UniqueConstraint(
                fields=("endpoint", "scope", "key"), name="one_idempotency_record_per_scope_key"
            ),
        ),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.CheckConstraint(
                condition=models.Q(("endpoint", "start"), ("state", "done"), _negated=True)
                | models.Q(("claim__isnull", False)),
                name="finished_start_names_its_claim",
            ),
        ),
    ]
