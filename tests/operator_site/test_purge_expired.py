"""`manage.py purge_expired` deletes what can no longer matter, and nothing else."""

import io
from datetime import timedelta

from django.core.management import call_command
from django.test import TestCase
from django.utils import timezone

from accounts.models import PasswordResetEmail
from agent_auth.models import Claim, ClaimStatus, IdempotencyRecord
from audit.models import AuditAction, AuditEvent, DailyUsage, UsageFigure
from oauth.models import Application, ClientPolicy, RedeemedCode
from tests.factories import make_idempotency_record, make_organization, make_user


def _claim(*, expired_for: timedelta, token: str) -> Claim:
    return Claim.objects.create(token_hash=token, code_hash="x" * 64, expires_at=timezone.now() - expired_for)


def _redeemed_code(*, expires_in: timedelta, checksum: str, application: Application) -> RedeemedCode:
    return RedeemedCode.objects.create(
        code_checksum=checksum, application=application, expires=timezone.now() + expires_in
    )


class PurgeExpiredTests(TestCase):
    def purge(self) -> str:
        out = io.StringIO()
        call_command("purge_expired", stdout=out)
        return out.getvalue()

    def test_claims_expired_over_a_day_ago_are_deleted_and_recent_ones_kept(self) -> None:
        old = _claim(expired_for=timedelta(days=2), token="a" * 64)
        recent = _claim(expired_for=timedelta(hours=1), token="b" * 64)

        self.purge()

        self.assertFalse(Claim.objects.filter(pk=old.pk).exists())
        self.assertTrue(Claim.objects.filter(pk=recent.pk).exists())

    def test_a_completed_claim_is_kept_while_its_token_may_still_be_valid(self) -> None:
        completed = _claim(expired_for=timedelta(days=2), token="e" * 64)
        Claim.objects.filter(pk=completed.pk).update(
            status=ClaimStatus.COMPLETED, completed_at=timezone.now() - timedelta(days=2)
        )
        lapsed = _claim(expired_for=timedelta(days=9), token="f" * 64)
        Claim.objects.filter(pk=lapsed.pk).update(
            status=ClaimStatus.COMPLETED, completed_at=timezone.now() - timedelta(days=9)
        )

        self.purge()

        self.assertTrue(Claim.objects.filter(pk=completed.pk).exists())
        self.assertFalse(Claim.objects.filter(pk=lapsed.pk).exists())

    def test_idempotency_records_past_their_24_hours_are_deleted(self) -> None:
        expired = make_idempotency_record(key="old", expires_at=timezone.now() - timedelta(seconds=1))
        live = make_idempotency_record(key="new", expires_at=timezone.now() + timedelta(hours=23))

        self.purge()

        self.assertFalse(IdempotencyRecord.objects.filter(pk=expired.pk).exists())
        self.assertTrue(IdempotencyRecord.objects.filter(pk=live.pk).exists())

    def test_password_reset_emails_are_deleted_once_their_link_expired(self) -> None:
        user = make_user()
        PasswordResetEmail.objects.create(user=user, expires_at=timezone.now() - timedelta(seconds=1))
        live = PasswordResetEmail.objects.create(user=user, expires_at=timezone.now() + timedelta(minutes=59))

        output = self.purge()

        self.assertEqual(list(PasswordResetEmail.objects.values_list("pk", flat=True)), [live.pk])
        self.assertIn("1 reset emails", output)

    def test_exchanged_codes_are_forgotten_only_after_their_tokens_lapse(self) -> None:
        application = Application.objects.create(
            name="client",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="https://client.example/callback",
        )
        lapsed = _redeemed_code(expires_in=timedelta(seconds=-1), checksum="c" * 64, application=application)
        live = _redeemed_code(expires_in=timedelta(days=29), checksum="d" * 64, application=application)

        output = self.purge()

        self.assertFalse(RedeemedCode.objects.filter(pk=lapsed.pk).exists())
        self.assertTrue(RedeemedCode.objects.filter(pk=live.pk).exists())
        self.assertIn("1 exchanged codes", output)


def _registered_client(*, days_ago: float, source: str, used: bool = False) -> Application:
    application = Application.objects.create(
        name="client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://client.example/callback",
        registration_source=source,
        last_used_at=timezone.now() if used else None,
    )
    # `created` is auto_now_add: moved back in time after the insert.
    Application.objects.filter(pk=application.pk).update(created=timezone.now() - timedelta(days=days_ago))
    return application


class PurgeClientsAndAuditTests(TestCase):
    def purge(self) -> str:
        out = io.StringIO()
        call_command("purge_expired", stdout=out)
        return out.getvalue()

    def test_registered_clients_that_never_obtained_a_token_within_24_hours_are_deleted(self) -> None:
        dcr = Application.RegistrationSource.DCR
        stale = _registered_client(days_ago=25 / 24, source=dcr)
        young = _registered_client(days_ago=23 / 24, source=dcr)
        used = _registered_client(days_ago=2, source=dcr, used=True)
        used_long_ago = _registered_client(days_ago=90, source=dcr, used=True)
        by_staff = _registered_client(days_ago=90, source=Application.RegistrationSource.MANUAL)

        output = self.purge()

        self.assertEqual(
            set(Application.objects.values_list("pk", flat=True)),
            {young.pk, used.pk, used_long_ago.pk, by_staff.pk},
        )
        self.assertFalse(Application.objects.filter(pk=stale.pk).exists())
        self.assertIn("1 unused clients", output)

    def test_metadata_document_clients_that_never_obtained_a_token_within_24_hours_are_deleted(self) -> None:
        # Fetched on the sign-in-free authorization page: anyone can add them, as with registration.
        cimd = Application.RegistrationSource.CIMD
        stale = _registered_client(days_ago=2, source=cimd)
        young = _registered_client(days_ago=23 / 24, source=cimd)
        used = _registered_client(days_ago=2, source=cimd, used=True)

        self.purge()

        self.assertEqual(set(Application.objects.values_list("pk", flat=True)), {young.pk, used.pk})
        self.assertFalse(Application.objects.filter(pk=stale.pk).exists())

    def test_an_unused_client_a_client_policy_lists_is_kept(self) -> None:
        listed = [
            _registered_client(days_ago=2, source=source)
            for source in (Application.RegistrationSource.DCR, Application.RegistrationSource.CIMD)
        ]
        policy = ClientPolicy.objects.create(organization=make_organization(), only_listed=True)
        policy.applications.set(listed)

        self.purge()

        self.assertEqual(set(policy.applications.values_list("pk", flat=True)), {client.pk for client in listed})

    def test_audit_events_past_the_retention_are_deleted(self) -> None:
        AuditEvent.objects.bulk_create(
            [
                AuditEvent(occurred_at=timezone.now() - timedelta(days=days), action=AuditAction.REFRESH, outcome="ok")
                for days in (181, 1)
            ]
        )

        output = self.purge()

        self.assertEqual(AuditEvent.objects.count(), 1)
        self.assertIn("1 audit events", output)


class UsageRollUpTests(TestCase):
    def test_the_days_that_ended_are_rolled_up_in_each_organizations_time_zone(self) -> None:
        organization = make_organization()
        organization.time_zone = "Asia/Tokyo"
        organization.save()
        AuditEvent.objects.create(
            occurred_at=timezone.now() - timedelta(days=2),
            action=AuditAction.TOOL_CALL,
            outcome="ok",
            organization_id=organization.pk,
            tool="list_modules",
        )
        out = io.StringIO()

        call_command("purge_expired", stdout=out)

        rolled = DailyUsage.objects.filter(organization_id=organization.pk, figure=UsageFigure.TOOL).get()
        self.assertEqual((rolled.time_zone, rolled.key, rolled.count), ("Asia/Tokyo", "list_modules", 1))
        self.assertIn("usage counts", out.getvalue())
