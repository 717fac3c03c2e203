"""Why a connection stopped, for the causes the trail once left unrecorded: each made to happen at the endpoints.

docs/managing-connections.md#why-a-connection-stopped lists every reason; the
older ones are tested in tests/connections/test_health.py.
"""

import io
from datetime import timedelta

from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit.failures import FailureReason
from audit.models import DETAIL_EXPIRED_TOKEN, AuditAction, AuditEvent
from oauth.models import AccessToken, Application, RefreshToken
from oauth.refresh_grace import token_checksum
from tests.connections.test_pages import MINE, ConnectionsTestCase, organization_page
from tests.factories import make_user
from tests.oauth.support import AUTHORIZE, REVOKE, pkce_pair
from tests.oauth.test_cimd import CLIENT_ID, with_fetcher
from tests.support import CIMD_LOGGER, quiet_loggers


class CausesTestCase(ConnectionsTestCase):
    def failure_seen(self, reason: FailureReason, *, path: str = MINE, user=None):
        response = self.as_person(user or self.member).get(path)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, f'data-reason="{reason}"')
        return next(row for row in response.context["failures"] if row.reason == reason)

    def expire(self) -> None:
        """The connection goes unused past its 30 days, and the daily job deletes its tokens."""
        past = timezone.now() - timedelta(days=31)
        AccessToken.objects.update(expires=past)
        RefreshToken.objects.update(created=past)
        call_command("purge_expired", stdout=io.StringIO())


class ExpiredTokenPresentedTests(CausesTestCase):
    def test_a_refresh_token_presented_after_the_daily_job_deleted_it_is_explained_as_expired(self) -> None:
        self.expire()
        self.assertFalse(RefreshToken.objects.exists())

        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        failure = self.failure_seen(FailureReason.REFRESH_EXPIRED)
        self.assertEqual((failure.client_name, failure.organization_name, failure.ended), ("Member Agent", "Acme", 1))
        self.assertIn("presented a sign-in token that had expired", failure.what)
        self.assertIn("Connect again.", failure.to_do)

    def test_the_admin_sees_it_on_the_organizations_page(self) -> None:
        self.expire()
        self.refresh(self.client_id, self.tokens["refresh_token"])

        failure = self.failure_seen(
            FailureReason.REFRESH_EXPIRED, path=organization_page(self.organization), user=self.admin
        )
        self.assertEqual(failure.person_email, self.member.email)
        self.assertIn("They connect again.", failure.to_do)

    def test_a_token_past_its_30_days_the_daily_job_has_not_deleted_yet_is_explained_too(self) -> None:
        RefreshToken.objects.update(created=timezone.now() - timedelta(days=31))

        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.failure_seen(FailureReason.REFRESH_EXPIRED)

    def test_the_expiry_keeps_neither_the_token_nor_its_stored_checksum(self) -> None:
        self.expire()

        (expiry,) = AuditEvent.objects.filter(action=AuditAction.CONNECTION_EXPIRY)
        kept = str(expiry.detail)
        self.assertIn(DETAIL_EXPIRED_TOKEN, expiry.detail)
        self.assertNotIn(self.tokens["refresh_token"], kept)
        self.assertNotIn(token_checksum(self.tokens["refresh_token"]), kept)

    def test_another_clients_presentation_of_the_token_records_nothing(self) -> None:
        self.expire()
        other = self.register(client_name="Other Agent")["client_id"]

        self.assertEqual(self.refresh(other, self.tokens["refresh_token"]).status_code, 400)
        self.assertEqual(self.refresh(self.client_id, "never-issued").status_code, 400)

        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.REFRESH, outcome="invalid_grant").exists())


class RefusedMetadataDocumentTests(CausesTestCase):
    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        quiet_loggers(self.addCleanup, CIMD_LOGGER)

    def authorize_document(self, fetcher: str):
        with self.settings(OAUTH2_PROVIDER=with_fetcher(f"tests.oauth.test_cimd.{fetcher}")):
            return self.browser.get(AUTHORIZE, self.authorize_params(CLIENT_ID, pkce_pair()[1]))

    def test_a_refused_document_at_sign_in_is_explained_on_the_persons_page(self) -> None:
        self.assertEqual(self.authorize_document("HtmlPageFetcher").status_code, 400)

        failure = self.failure_seen(FailureReason.CLIENT_DOCUMENT_REFUSED)
        self.assertEqual((failure.client_name, failure.organization_name, failure.ended), (CLIENT_ID, "", False))
        self.assertIn("could not use that document", failure.what)
        self.assertIn("the client's maker must fix the document", failure.to_do)
        (event,) = AuditEvent.objects.filter(action=AuditAction.CLIENT_DOCUMENT_REFUSAL)
        self.assertEqual((event.person_id, event.detail), (self.member.pk, {"reason": "NOT_JSON"}))

    def test_a_retried_refusal_is_recorded_once_while_dot_waits_to_fetch_again(self) -> None:
        for _ in range(3):
            self.authorize_document("HtmlPageFetcher")

        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.CLIENT_DOCUMENT_REFUSAL).count(), 1)

    def test_a_refusal_before_sign_in_names_nobody_and_records_nothing(self) -> None:
        anonymous = Client()
        with self.settings(OAUTH2_PROVIDER=with_fetcher("tests.oauth.test_cimd.HtmlPageFetcher")):
            response = anonymous.get(AUTHORIZE, self.authorize_params(CLIENT_ID, pkce_pair()[1]))

        self.assertEqual(response.status_code, 400)
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.CLIENT_DOCUMENT_REFUSAL).exists())

    def test_an_unknown_plain_client_id_is_no_document_refusal(self) -> None:
        self.browser.get(AUTHORIZE, self.authorize_params("no-such-client", pkce_pair()[1]))

        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.CLIENT_DOCUMENT_REFUSAL).exists())


class EndedByStaffTests(CausesTestCase):
    """DOT's admin forbids deleting tokens, so staff end a client's connections with its revoke actions."""

    def setUp(self) -> None:
        super().setUp()
        self.staff = make_user(is_staff=True, is_superuser=True)
        self.staff_browser = Client()
        self.staff_browser.force_login(self.staff)

    def revoke_in_the_admin(self, model: str, pks: list[int]):
        return self.staff_browser.post(
            reverse(f"admin:oauth_{model}_changelist"),
            {"action": "revoke_tokens", "_selected_action": pks, "post": "yes"},
        )

    def test_a_client_holding_tokens_cannot_be_deleted_in_the_admin(self) -> None:
        application = Application.objects.get(client_id=self.client_id)

        response = self.staff_browser.post(
            reverse("admin:oauth_application_delete", args=[application.pk]), {"post": "yes"}
        )

        self.assertEqual(response.status_code, 403)
        self.assertTrue(Application.objects.filter(pk=application.pk).exists())

    def test_refresh_tokens_revoked_by_staff_are_explained_to_the_person_and_the_admin(self) -> None:
        live = RefreshToken.objects.get(revoked__isnull=True)

        self.assertEqual(self.revoke_in_the_admin("refreshtoken", [live.pk]).status_code, 302)
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        failure = self.failure_seen(FailureReason.ENDED_BY_STAFF)
        self.assertEqual((failure.client_name, failure.organization_name, failure.ended), ("Member Agent", "Acme", 1))
        self.assertIn("staff ended this connection", failure.what)
        self.failure_seen(FailureReason.ENDED_BY_STAFF, path=organization_page(self.organization), user=self.admin)
        (event,) = AuditEvent.objects.filter(action=AuditAction.STAFF_REVOCATION)
        self.assertEqual((event.person_id, event.actor_id), (self.member.pk, self.staff.pk))

    def test_an_access_token_revoked_by_staff_ends_and_explains_its_connection(self) -> None:
        access = AccessToken.objects.get()

        self.assertEqual(self.revoke_in_the_admin("accesstoken", [access.pk]).status_code, 302)

        self.failure_seen(FailureReason.ENDED_BY_STAFF)

    def test_revoking_a_token_of_an_ended_connection_records_nothing(self) -> None:
        revoked = self.api.post(REVOKE, {"token": self.tokens["refresh_token"], "client_id": self.client_id})
        self.assertEqual(revoked.status_code, 200)

        self.revoke_in_the_admin("refreshtoken", list(RefreshToken.objects.values_list("pk", flat=True)))

        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.STAFF_REVOCATION).exists())
