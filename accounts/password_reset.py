"""Password recovery of local accounts: who may get a reset email, its limits, and its outbox.

Django's `PasswordResetView` and `PasswordResetConfirmView` do the rest (the
token, its one-hour expiry in PASSWORD_RESET_TIMEOUT, its single use). Every
request gets the same page; an email is queued only for an active account with
a password whose domain does not require its identity provider. The link is
sealed in a `PasswordResetEmail` until the email worker sends it
(operator_core.outbox). Audit rows name the person only, never the email or
the token; a request for an unknown email writes none
(docs/development/decisions.md#password-recovery).
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django_tasks import task

from accounts.emails import email_domain, normalized_email, person_for_email_or_none
from accounts.models import PasswordResetEmail
from audit.models import AuditAction
from audit.services import record_event
from operator_core.client_ip import client_ip
from operator_core.conf import operator_settings
from operator_core.errors import RateLimited
from operator_core.outbox import Outbox, attempt_delivery
from operator_core.rate_limits import FixedWindowLimiter, OnOutage
from operator_core.telemetry import metrics

logger = logging.getLogger(__name__)

EMAIL_SUBJECT = "Reset your Service Operator password"
# Requests per hour: per client address, and per email (from any address, known or not).
REQUESTS_PER_ADDRESS_PER_HOUR = 20
REQUESTS_PER_EMAIL_PER_HOUR = 3
TOO_MANY = "Too many reset requests; try again later."
OUTCOME_PROVIDER_REQUIRED = "provider_required"
OUTCOME_NOT_ELIGIBLE = "not_eligible"
_EMAIL_KEY_SALT = "accounts.password_reset.email"
RESET_RATE_GROUP = "accounts.reset"


def require_reset_allowed(request: HttpRequest, *, email: str) -> None:
    """Count one reset request per address and per email; raise `RateLimited` past either.

    Both counts advance on every request, refused or not, and whether or not the
    email has an account. `TemporarilyUnavailable` while Redis does not answer:
    the limit guards people's inboxes.
    """
    per_address = FixedWindowLimiter(
        group=f"{RESET_RATE_GROUP}.address", limit=REQUESTS_PER_ADDRESS_PER_HOUR, period_seconds=3600
    )
    per_email = FixedWindowLimiter(
        group=f"{RESET_RATE_GROUP}.email",
        limit=REQUESTS_PER_EMAIL_PER_HOUR,
        period_seconds=3600,
        on_outage=OnOutage.REFUSE,
    )
    # The cache never holds an address: the email's key is an HMAC under SECRET_KEY.
    email_key = salted_hmac(_EMAIL_KEY_SALT, normalized_email(email), algorithm="sha256").hexdigest()
    counts = [per_address.count(client_ip(request)), per_email.count(email_key)]
    exceeded = [count for count in counts if count.exceeded]
    if exceeded:
        metrics.count_limit_refusal(RESET_RATE_GROUP)
        raise RateLimited(TOO_MANY, retry_after_seconds=max(count.retry_after_seconds for count in exceeded))


def provider_required_for(email: str) -> bool:
    """Whether the domain of `email` must sign in through its identity provider (no password, no reset).

    Read through the app registry: identity providers sit above accounts in the
    layers (docs/development/architecture.md), and this is the one fact read.
    """
    provider_domain = apps.get_model("identity_providers", "ProviderDomain")
    return provider_domain.objects.filter(domain=email_domain(email), provider__required=True).exists()


def reset_recipient_or_none(email: str) -> User | None:
    """The account a reset email goes to for `email`, or None; a known account's refusal is audited."""
    user = person_for_email_or_none(email)
    if user is None:
        return None
    if not user.is_active or not user.has_usable_password():
        outcome = OUTCOME_NOT_ELIGIBLE
    elif provider_required_for(user.email):
        outcome = OUTCOME_PROVIDER_REQUIRED
    else:
        return user
    record_event(AuditAction.PASSWORD_RESET_REQUEST, outcome=outcome, person_id=user.pk)
    return None


def queue_reset_email(*, user: User, uidb64: str, token: str) -> None:
    """Seal the reset link into the outbox with its first attempt, and audit the request."""
    path = reverse("accounts:password-reset-confirm", kwargs={"uidb64": uidb64, "token": token})
    # The configured public address, never the request's Host header, which a requester chooses.
    link = f"{operator_settings().base_url}{path}"
    expires_at = timezone.now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    RESET_EMAILS.queue(link, user=user, expires_at=expires_at)
    record_event(AuditAction.PASSWORD_RESET_REQUEST, person_id=user.pk)


def record_password_reset(user: User) -> None:
    record_event(AuditAction.PASSWORD_RESET, person_id=user.pk)


def _recipient(email: PasswordResetEmail, now: datetime) -> str | None:
    if email.expires_at <= now or not email.user.is_active or not email.user.email:
        return None
    return email.user.email


def _body(email: PasswordResetEmail, link: str) -> str:
    minutes = settings.PASSWORD_RESET_TIMEOUT // 60
    return (
        "Someone asked to reset the password of your Service Operator account.\n\n"
        f"To choose a new password, open this link within {minutes} minutes. It works once:\n\n{link}\n\n"
        "If you did not ask for it, ignore this email: your password stays as it is.\n"
    )


@task()
def deliver_reset_email(email_id: str) -> str:
    """One attempt to send the reset email `email_id` (run by the email worker)."""
    return attempt_delivery(RESET_EMAILS, uuid.UUID(email_id))


RESET_EMAILS = Outbox(
    model=PasswordResetEmail,
    sealed_field="sealed_link",
    seal_salt="accounts.password_reset_email",
    task=deliver_reset_email,
    subject=EMAIL_SUBJECT,
    what="a password reset link",
    logger=logger,
    retry_until=lambda email: email.expires_at,
    recipient=_recipient,
    body=_body,
    related=("user",),
)


def purge_expired_reset_emails(*, now: datetime) -> int:
    """Delete the outbox rows of reset links that expired (their seal erased or unusable by now)."""
    deleted, _ = PasswordResetEmail.objects.filter(expires_at__lt=now).delete()
    return deleted
