"""`manage.py purge_expired`: delete rows that can no longer matter (docs/operations.md)."""

from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone
from oauth2_provider.models import clear_expired

from accounts.password_reset import deliver_reset_email, purge_expired_reset_emails
from agent_auth.idempotency import purge_expired_records
from agent_auth.outbox import deliver_verification_email
from agent_auth.services import purge_expired_claims
from audit.services import purge_audit_events, roll_up_usage
from oauth.connections import record_expired_connections
from oauth.refresh_grace import purge_expired_rotations
from oauth.services import purge_redeemed_codes, purge_unused_clients
from operator_core.outbox import purge_finished_attempts
from organizations.selectors import organization_time_zones


class Command(BaseCommand):
    help = (
        "Record connections that expired unused in the audit trail, then delete expired OAuth tokens "
        "and grants, exchanged-code records, refresh answers kept past "
        "their grace window, headless claims, Idempotency-Key records, finished email attempts, "
        "expired password reset emails, "
        "audit events past their retention and registered clients that obtained no token within 24 hours; "
        "then count the days that ended into the usage roll-up. Safe to run at any time; run it daily."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        expired = record_expired_connections(now=now)  # before DOT deletes their tokens
        clear_expired()  # DOT: expired access and refresh tokens, grants and ID tokens
        codes = purge_redeemed_codes(now=now)
        rotations = purge_expired_rotations(now=now)
        claims = purge_expired_claims(now=now)
        records = purge_expired_records(now=now)
        attempts = purge_finished_attempts([deliver_verification_email, deliver_reset_email], now=now)
        reset_emails = purge_expired_reset_emails(now=now)
        events = purge_audit_events(now=now)
        clients = purge_unused_clients(now=now)
        usage = roll_up_usage(now=now, time_zones=organization_time_zones())
        self.stdout.write(
            f"Recorded {expired} expired connections. Purged expired tokens and grants, {codes} exchanged codes, "
            f"{rotations} refresh answers, "
            f"{claims} claims, {records} idempotency records, {attempts} email attempts, {reset_emails} reset emails, "
            f"{events} audit events, {clients} unused clients; wrote {usage} usage counts."
        )
