"""The time zone's default in the database too, for the release before it during a rolling upgrade.

0009 added `time_zone` NOT NULL with a default Django sets in Python only, so
the previous release (which knows no time zone) could not add an organization
while it served beside this one on the new schema (docs/deploy.md#upgrades).
"""

import organizations.models
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0009_organization_time_zone"),
    ]

    operations = [
        migrations.AlterField(
            model_name="organization",
            name="time_zone",
            field=models.CharField(
                db_default="UTC",
                default="UTC",
                max_length=64,
                validators=[organizations.models.validate_time_zone],
            ),
        ),
    ]
