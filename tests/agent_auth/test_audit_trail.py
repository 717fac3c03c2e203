"""A headless claim started, completed or ended leaves exactly its audit record, and never the email,
claim token or code (docs/operations.md#audit-trail)."""

from agent_auth.services import HEADLESS_CLIENT_ID
from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase, wrong_code
from tests.audit.support import assert_holds_no_secret, field_values, only_event
from tests.factories import make_membership


class HeadlessRecordTests(HeadlessTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.membership = make_membership(role=Role.MEMBER)
        self.email = self.membership.user.email

    def test_a_started_claim_records_the_person_and_never_the_email(self) -> None:
        claim_token, code = self.start_and_read_code(self.email)

        event = only_event(self, action=AuditAction.CLAIM_START)
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertEqual(event.person_id, self.membership.user_id)
        self.assertIsNone(event.organization_id)
        self.assertEqual(event.client_id, HEADLESS_CLIENT_ID)
        self.assertNotIn(self.email, " ".join(field_values(event)))
        assert_holds_no_secret(self, claim_token, code)

    def test_a_claim_for_an_unknown_email_is_recorded_without_a_person(self) -> None:
        self.start("nobody@example.test")

        self.assertIsNone(only_event(self, action=AuditAction.CLAIM_START).person_id)

    def test_a_completed_claim_records_the_organization_bound_to_the_token(self) -> None:
        claim_token, code = self.start_and_read_code(self.email)

        response = self.complete(claim_token, code)

        event = only_event(self, action=AuditAction.CLAIM_COMPLETION)
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertEqual(
            (event.person_id, event.organization_id), (self.membership.user_id, self.membership.organization_id)
        )
        self.assertEqual(event.client_id, HEADLESS_CLIENT_ID)
        self.assertEqual(event.detail, {"scopes": ["mcp:operator.read", "mcp:operator.write"]})
        assert_holds_no_secret(self, claim_token, code, response.json()["access_token"])

    def test_the_fifth_wrong_code_records_the_claim_ended(self) -> None:
        claim_token, code = self.start_and_read_code(self.email)

        for _ in range(5):
            self.complete(claim_token, wrong_code(code))

        event = only_event(self, action=AuditAction.CLAIM_END)
        self.assertEqual(event.outcome, "invalid_code")
        self.assertEqual(event.person_id, self.membership.user_id)
        self.assertEqual(event.detail, {"attempts": 5})
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.CLAIM_COMPLETION).exists())
        assert_holds_no_secret(self, claim_token, code, wrong_code(code))
