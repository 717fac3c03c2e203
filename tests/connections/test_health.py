"""Why a connection stopped, in plain words, on the person's page and the admins'.

docs/managing-connections.md#why-a-connection-stopped lists every reason.

Each refusal is made to happen through the real endpoints (a rate or
concurrency refusal through the audit trail's own writer, as the endpoint
records it), then read back on the page.
"""

import io
from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from audit.failures import FailureReason
from audit.models import AuditAction, AuditEvent
from audit.services import record_tool_call
from oauth.models import AccessToken, RefreshRotation
from organizations.models import Role
from organizations.services import record_role_change
from tests.connections.test_pages import MINE, ConnectionsTestCase, organization_page
from tests.mcp_requests import envelope, post_mcp
from tests.oauth.support import REVOKE


class WhyAConnectionStoppedTests(ConnectionsTestCase):
    def failures_seen_by(self, user, path: str = MINE) -> list:
        response = self.as_person(user).get(path)
        self.assertEqual(response.status_code, 200)
        return response.context["failures"]

    def assert_explained(self, reason: FailureReason, *words: str, ended: bool = True) -> None:
        response = self.as_person(self.member).get(MINE)
        failure = next(row for row in response.context["failures"] if row.reason == reason)
        self.assertEqual(
            (failure.client_name, failure.organization_name, failure.ended), ("Member Agent", "Acme", ended)
        )
        for text in words:
            self.assertIn(text, f"{failure.what} {failure.to_do}")
        self.assertContains(response, f'data-reason="{reason}"')
        self.assertContains(response, failure.what)

    def set_role(self, role: Role) -> None:
        membership = self.member.memberships.get(organization=self.organization)
        record_role_change(membership=membership, role=role, changed_by=self.admin)

    def test_a_refresh_refused_because_the_role_became_learner(self) -> None:
        self.set_role(Role.LEARNER)
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.assert_explained(
            FailureReason.REFRESH_ROLE, "Your role in Acme changed to learner", "Ask an admin of Acme."
        )

    def test_a_refresh_refused_because_the_person_left_the_organization(self) -> None:
        self.member.memberships.all().delete()
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.assert_explained(FailureReason.REFRESH_ROLE, "You are no longer in Acme", "Ask an admin of Acme.")

    def test_a_refresh_refused_by_the_client_policy(self) -> None:
        self.as_person(self.admin).post(f"{organization_page(self.organization)}policy", {"mode": "listed"})
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.assert_explained(
            FailureReason.REFRESH_CLIENT_POLICY,
            "Acme allows only approved clients, and this client is not one",
            "Ask an admin of Acme to approve this client",
        )

    def test_a_consent_refused_by_the_client_policy(self) -> None:
        self.as_person(self.admin).post(f"{organization_page(self.organization)}policy", {"mode": "listed"})
        response, _ = self.consent(self.client_id)
        self.assertEqual(response.status_code, 403)

        self.assert_explained(
            FailureReason.CONSENT_CLIENT_POLICY, "so it was refused at consent", "Ask an admin of Acme", ended=False
        )

    def test_a_consent_the_person_denied(self) -> None:
        self.consent(self.client_id, allow=False)

        self.assert_explained(FailureReason.CONSENT_DENIED, "you chose Deny", ended=False)

    def test_an_old_refresh_token_presented_after_the_grace_window(self) -> None:
        rotated = self.refresh(self.client_id, self.tokens["refresh_token"])
        self.assertEqual(rotated.status_code, 200)
        ended = timezone.now() - timedelta(seconds=1)
        RefreshRotation.objects.update(created=ended - timedelta(seconds=60), expires=ended)

        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.assert_explained(
            FailureReason.REUSE_AFTER_WINDOW,
            "This client presented an old sign-in token after the safe retry window, so the service ended the "
            "connection to protect your account. Connect again; if it happens often, update the client.",
        )

    def test_an_old_refresh_token_presented_after_its_successor_was_used(self) -> None:
        second = self.refresh(self.client_id, self.tokens["refresh_token"]).json()["refresh_token"]
        self.assertEqual(self.refresh(self.client_id, second).status_code, 200)

        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.assert_explained(FailureReason.REUSE_AFTER_SUCCESSOR, "after it had already used the new one")

    def test_a_code_exchanged_twice(self) -> None:
        authorization = self.authorize(self.client_id)
        self.assertEqual(self.exchange(self.client_id, authorization).status_code, 200)

        self.assertEqual(self.exchange(self.client_id, authorization).status_code, 400)

        self.assert_explained(FailureReason.CODE_REPLAY, "used the same one-time sign-in code twice")

    def test_a_connection_the_client_revoked(self) -> None:
        revoked = self.api.post(REVOKE, {"token": self.tokens["refresh_token"], "client_id": self.client_id})
        self.assertEqual(revoked.status_code, 200)

        self.assert_explained(FailureReason.REVOKED_BY_CLIENT, "The client ended this connection itself")

    def test_a_connection_that_expired_unused(self) -> None:
        AccessToken.objects.update(expires=timezone.now() - timedelta(days=31))

        call_command("purge_expired", stdout=io.StringIO())

        self.assert_explained(FailureReason.EXPIRED, "did not use this connection for 30 days")

    def test_an_expiry_is_recorded_once_however_often_the_daily_job_runs(self) -> None:
        AccessToken.objects.update(expires=timezone.now() - timedelta(days=31))

        for _ in range(2):
            call_command("purge_expired", stdout=io.StringIO())

        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.CONNECTION_EXPIRY).count(), 1)

    def test_a_tool_call_refused_because_the_role_became_learner(self) -> None:
        self.set_role(Role.LEARNER)
        response = post_mcp(
            self.api,
            envelope("tools/call", {"name": "list_modules", "arguments": {}}),
            token=self.tokens["access_token"],
        )
        self.assertTrue(response.json()["result"]["isError"])

        self.assert_explained(FailureReason.FORBIDDEN, "did not hold the admin or member role in Acme", ended=False)

    def test_rate_and_concurrency_refusals(self) -> None:
        for outcome in ("rate_limited", "concurrency_limited"):
            record_tool_call(
                person_id=self.member.pk,
                organization_id=self.organization.pk,
                client_id=self.client_id,
                tool="list_modules",
                outcome=outcome,
                duration_ms=0.1,
            )

        self.assert_explained(FailureReason.RATE_LIMITED, "faster than the service allows", ended=False)
        self.assert_explained(FailureReason.CONCURRENCY_LIMITED, "more tool calls at once", ended=False)

    def test_a_live_connection_shows_its_last_failure_last_call_and_last_refresh(self) -> None:
        record_tool_call(
            person_id=self.member.pk,
            organization_id=self.organization.pk,
            client_id=self.client_id,
            tool="list_modules",
            outcome="rate_limited",
            duration_ms=0.1,
        )

        (row,) = self.as_person(self.member).get(MINE).context["rows"]

        self.assertEqual(row.failure.reason, FailureReason.RATE_LIMITED)
        self.assertIsNotNone(row.last_call_at)
        self.assertIsNotNone(row.last_refresh_at)

    def test_an_admin_sees_each_members_failures_in_their_words(self) -> None:
        self.set_role(Role.LEARNER)
        self.refresh(self.client_id, self.tokens["refresh_token"])

        (failure,) = self.failures_seen_by(self.admin, organization_page(self.organization))

        self.assertEqual((failure.reason, failure.person_email), (FailureReason.REFRESH_ROLE, self.member.email))
        self.assertIn("Their role in Acme changed to learner", failure.what)

    def test_another_persons_failures_are_not_shown(self) -> None:
        self.set_role(Role.LEARNER)
        self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(self.failures_seen_by(self.admin), [])

    def test_the_person_page_reads_a_bounded_number_of_queries(self) -> None:
        self.set_role(Role.LEARNER)
        self.refresh(self.client_id, self.tokens["refresh_token"])
        browser = self.as_person(self.member)

        # session, person, failures, roles, organizations, OAuth connections (consented, provider-granted),
        # headless connections; with no live connection, no tool call is read
        with self.assertNumQueries(8):
            browser.get(MINE)
