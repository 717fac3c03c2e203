"""`manage.py export_audit` writes one organization's events over a date range, and nothing else."""

import csv
import io
import json
from datetime import UTC, datetime, timedelta

from django.core.management import CommandError, call_command
from django.test import TestCase

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from oauth.models import Application
from tests.factories import make_membership, make_organization


def _event_at(membership, moment: datetime, *, tool: str = "list_modules") -> None:
    # The service stamps the present and rows are never updated: a past event is inserted as past.
    AuditEvent.objects.bulk_create(
        [
            AuditEvent(
                occurred_at=moment,
                action=AuditAction.TOOL_CALL,
                outcome=OUTCOME_OK,
                person_id=membership.user_id,
                organization_id=membership.organization_id,
                client_id="claude",
                tool=tool,
                duration_ms=1.5,
            )
        ]
    )


class ExportAuditTests(TestCase):
    def setUp(self) -> None:
        self.acme = make_membership(organization=make_organization(slug="acme"))
        self.globex = make_membership(organization=make_organization(slug="globex"))
        Application.objects.create(
            client_id="claude",
            name="Claude Desktop",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="https://claude.example/callback",
        )
        self.day = datetime(2026, 11, 16, tzinfo=UTC)
        _event_at(self.acme, self.day + timedelta(hours=9), tool="get_module")
        _event_at(self.acme, self.day + timedelta(days=6, hours=23, minutes=59))
        _event_at(self.acme, self.day + timedelta(days=7))  # the day after the range
        _event_at(self.acme, self.day - timedelta(seconds=1))  # the day before
        _event_at(self.globex, self.day + timedelta(hours=10))

    def export(self, *args: str) -> str:
        out = io.StringIO()
        call_command("export_audit", *args, stdout=out)
        return out.getvalue()

    def test_csv_holds_only_the_organizations_rows_within_the_days_given(self) -> None:
        output = self.export("--organization", "acme", "--from", "2026-11-16", "--to", "2026-11-22")

        rows = list(csv.DictReader(io.StringIO(output)))
        self.assertEqual([row["tool"] for row in rows], ["get_module", "list_modules"])
        self.assertEqual({row["organization_slug"] for row in rows}, {"acme"})
        self.assertEqual({row["person_email"] for row in rows}, {self.acme.user.email})
        self.assertEqual({row["client_name"] for row in rows}, {"Claude Desktop"})
        self.assertEqual(rows[0]["occurred_at"], "2026-11-16T09:00:00+00:00")

    def test_json_lines_hold_the_same_rows(self) -> None:
        output = self.export(
            "--organization", "acme", "--from", "2026-11-16", "--to", "2026-11-22", "--format", "jsonl"
        )

        rows = [json.loads(line) for line in output.splitlines()]
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0]["action"], "tool_call")
        self.assertEqual(rows[0]["organization_id"], str(self.acme.organization_id))
        self.assertEqual(rows[0]["detail"], {})

    def test_another_organization_exports_only_its_own(self) -> None:
        output = self.export(
            "--organization", "globex", "--from", "2026-11-16", "--to", "2026-11-16", "--format", "jsonl"
        )

        self.assertEqual([json.loads(line)["organization_slug"] for line in output.splitlines()], ["globex"])

    def test_an_unknown_organization_or_a_backwards_range_is_an_error(self) -> None:
        with self.assertRaises(CommandError):
            self.export("--organization", "initech", "--from", "2026-11-16", "--to", "2026-11-22")
        with self.assertRaises(CommandError):
            self.export("--organization", "acme", "--from", "2026-11-22", "--to", "2026-11-16")
