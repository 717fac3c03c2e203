"""The previous release, serving beside this one on the new schema, can still add an organization.

The finding (issue 34, the rolling upgrade): migration 0009 added `time_zone`
NOT NULL with its default in Python only, so the release before it, which
writes no time zone, failed with a NOT NULL violation when a person added an
organization in its admin during the upgrade (docs/deploy.md#upgrades).
"""

import uuid

from django.db import connection
from django.test import TestCase
from django.utils import timezone

from organizations.models import Organization


class PreviousReleaseTests(TestCase):
    def test_an_organization_written_without_a_time_zone_gets_utc(self) -> None:
        fields = {name: Organization._meta.get_field(name) for name in ("id", "slug", "name", "created_at")}
        values = [
            fields["id"].get_db_prep_value(uuid.uuid4(), connection),
            "previous-release",
            "Added by the previous release",
            fields["created_at"].get_db_prep_value(timezone.now(), connection),
        ]
        columns = ", ".join(connection.ops.quote_name(field.column) for field in fields.values())
        table = connection.ops.quote_name(Organization._meta.db_table)

        with connection.cursor() as cursor:  # the INSERT the previous release's model makes
            cursor.execute(f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s)", values)

        self.assertEqual(Organization.objects.get(slug="previous-release").time_zone, "UTC")
