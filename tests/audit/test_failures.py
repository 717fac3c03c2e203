"""The trail's reading of failures keeps to what the authorization server writes (audit/failures.py)."""

from django.test import SimpleTestCase
from oauthlib.oauth2.rfc6749.errors import AccessDeniedError, InvalidGrantError

from audit import failures
from audit.failures import REFUSAL_KINDS, FailureReason, failure_reason
from audit.models import AuditAction
from oauth import audit_trail, consent_refusal, refresh_grace


class WireValuesTests(SimpleTestCase):
    def test_the_reasons_are_the_ones_the_authorization_server_writes(self) -> None:
        self.assertEqual(failures.DETAIL_ROLE, audit_trail.REASON_ROLE)
        self.assertEqual(failures.DETAIL_CLIENT_POLICY, audit_trail.REASON_CLIENT_POLICY)
        self.assertEqual(failures.DETAIL_CLIENT_POLICY, consent_refusal.REASON_CLIENT_POLICY)
        self.assertEqual(failures.DETAIL_OUTSIDE_WINDOW, refresh_grace.REASON_OUTSIDE_WINDOW)
        self.assertEqual(failures.DETAIL_SUCCESSOR_USED, refresh_grace.REASON_SUCCESSOR_USED)
        self.assertEqual(failures.DETAIL_REFRESH_TOKEN, audit_trail.TOKEN_TYPE_REFRESH)
        self.assertEqual(failures.DETAIL_EXPIRED, audit_trail.REASON_EXPIRED)
        self.assertEqual(failures.OUTCOME_ACCESS_DENIED, AccessDeniedError.error)
        self.assertEqual(failures.OUTCOME_INVALID_GRANT, InvalidGrantError.error)


class FailureReasonTests(SimpleTestCase):
    def test_a_successful_refresh_and_an_access_token_revocation_are_no_failure(self) -> None:
        refresh = failure_reason(action=AuditAction.REFRESH, outcome="ok", reason=None, token_type=None)
        revocation = failure_reason(action=AuditAction.REVOCATION, outcome="ok", reason=None, token_type="access_token")

        self.assertEqual((refresh, revocation), (None, None))

    def test_a_tool_error_is_no_refusal(self) -> None:
        found = failure_reason(action=AuditAction.TOOL_CALL, outcome="not_found", reason=None, token_type=None)

        self.assertIsNone(found)

    def test_every_refusal_falls_into_one_of_the_four_groups(self) -> None:
        not_refusals = {
            FailureReason.CONSENT_DENIED,
            FailureReason.REVOKED_BY_CLIENT,
            FailureReason.EXPIRED,
            FailureReason.ENDED_BY_STAFF,
        }

        self.assertEqual(set(REFUSAL_KINDS), set(FailureReason) - not_refusals)
