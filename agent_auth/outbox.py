"""The outbox of verification emails: written with the claim, sent by the email worker, once.

`queue_verification_email`, called inside `start_claim`'s transaction, writes
the claim's one `VerificationEmail` (its code sealed under a key derived from
SECRET_KEY and the row's id) and a `deliver_verification_email` task for the
email worker (`manage.py db_worker`, docs/operations.md#the-email-worker), so
the request answers before any SMTP round trip and the email outlives the
process that answered. Each attempt commits the next one before it talks to
SMTP, then sends with the row locked and marks it sent in the same
transaction. Why, and the one window that can send a code twice:
docs/development/decisions.md#headless-path.
"""

from __future__ import annotations

import base64
import logging
import smtplib
import uuid
from datetime import datetime, timedelta
from enum import StrEnum

from cryptography.fernet import Fernet, InvalidToken
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django_tasks import task
from django_tasks_db.models import DBTaskResult

from agent_auth.models import Claim, VerificationEmail
from operator_core.conf import operator_settings

logger = logging.getLogger(__name__)

EMAIL_SUBJECT = "Your Service Operator code"
# Seconds before the next attempt, by attempts made so far; the last applies from then on.
RETRY_DELAYS_SECONDS = (10, 30, 60)
_SEAL_SALT = "agent_auth.verification_email"


class Delivery(StrEnum):
    """What one attempt did (the task's stored result)."""

    SENT = "sent"
    FAILED = "failed"
    REFUSED = "refused"
    NOTHING_TO_SEND = "nothing_to_send"


def queue_verification_email(*, claim: Claim, code: str) -> None:
    """Write the claim's email and its first attempt; call inside the claim's transaction."""
    email_id = uuid.uuid4()
    VerificationEmail.objects.create(id=email_id, claim=claim, sealed_code=_seal(email_id, code))
    deliver_verification_email.enqueue(str(email_id))


@task()
def deliver_verification_email(email_id: str) -> str:
    """One attempt to send the email `email_id` (run by the email worker)."""
    return attempt_delivery(uuid.UUID(email_id))


def attempt_delivery(email_id: uuid.UUID, *, now: datetime | None = None) -> Delivery:
    """Schedule the next attempt, then send the email unless it was sent, expired or has no recipient."""
    now = now or timezone.now()
    pending = VerificationEmail.objects.filter(pk=email_id, sent_at__isnull=True).exclude(sealed_code="").first()
    if pending is None:
        return Delivery.NOTHING_TO_SEND
    retry_at = now + timedelta(seconds=RETRY_DELAYS_SECONDS[min(pending.attempts, len(RETRY_DELAYS_SECONDS) - 1)])
    expires_at = Claim.objects.values_list("expires_at", flat=True).get(pk=pending.claim_id)
    if retry_at < expires_at:
        deliver_verification_email.using(run_after=retry_at).enqueue(str(email_id))
    with transaction.atomic():
        # Locked until marked sent: a concurrent attempt waits here, then finds it sent.
        email = (
            VerificationEmail.objects.select_for_update(of=("self",))
            .select_related("claim__user")
            .filter(pk=email_id, sent_at__isnull=True)
            .exclude(sealed_code="")
            .first()
        )
        if email is None:
            return Delivery.NOTHING_TO_SEND
        user = email.claim.user
        if email.claim.expires_at <= now or user is None or not user.is_active:
            _erase(email)
            return Delivery.NOTHING_TO_SEND
        try:
            code = _unseal(email.pk, email.sealed_code)
        except InvalidToken:
            # Sealed under a previous SECRET_KEY: unreadable for good.
            logger.error("agent_auth: a verification code could not be unsealed; it is dropped")
            _erase(email)
            return Delivery.NOTHING_TO_SEND
        email.attempts += 1
        try:
            _send(address=user.email, code=code)
        except (smtplib.SMTPException, OSError) as failure:
            return _record_failure(email, failure)
        email.sent_at = now
        email.sealed_code = ""
        email.save(update_fields=["attempts", "sent_at", "sealed_code"])
    return Delivery.SENT


# Finished attempts are kept this long, for support questions, then purged.
FINISHED_ATTEMPT_RETENTION = timedelta(days=1)


def purge_finished_attempts(*, now: datetime) -> int:
    """Delete the worker's records of attempts that finished more than a day before `now`."""
    deleted, _ = (
        DBTaskResult.objects.finished()
        .filter(task_path=deliver_verification_email.module_path, finished_at__lt=now - FINISHED_ATTEMPT_RETENTION)
        .delete()
    )
    return deleted


def smtp_reply_codes(failure: Exception) -> tuple[int, ...]:
    """The SMTP reply codes a failure carries, without the text around them (which may name the address)."""
    if isinstance(failure, smtplib.SMTPRecipientsRefused):
        return tuple(sorted({code for code, _ in failure.recipients.values()}))
    if isinstance(failure, smtplib.SMTPResponseException):
        return (failure.smtp_code,)
    return ()


def _record_failure(email: VerificationEmail, failure: Exception) -> Delivery:
    # Never the address nor the code: the exception's type and its reply codes only.
    codes = smtp_reply_codes(failure)
    shown = " ".join(str(code) for code in codes) or "no reply code"
    if codes and all(500 <= code < 600 for code in codes):
        logger.error(
            "agent_auth: the mail server refused a verification code permanently (%s, %s, attempt %d); "
            "it is not retried",
            type(failure).__name__,
            shown,
            email.attempts,
        )
        email.sealed_code = ""  # the attempt already scheduled finds nothing to send
        email.save(update_fields=["attempts", "sealed_code"])
        return Delivery.REFUSED
    logger.error(
        "agent_auth: sending a verification code failed (%s, %s, attempt %d)",
        type(failure).__name__,
        shown,
        email.attempts,
    )
    email.save(update_fields=["attempts"])
    return Delivery.FAILED


def _send(*, address: str, code: str) -> None:
    minutes = operator_settings().headless_code_lifetime_seconds // 60
    message = (
        f"Your Service Operator verification code is {code}\n\n"
        f"It is valid for {minutes} minutes. Give it only to the agent you are connecting.\n"
        "If you did not ask for it, ignore this email: nothing happens without the code.\n"
    )
    send_mail(EMAIL_SUBJECT, message, None, [address])


def _erase(email: VerificationEmail) -> None:
    email.sealed_code = ""
    email.save(update_fields=["sealed_code"])


def _cipher(email_id: uuid.UUID) -> Fernet:
    digest = salted_hmac(_SEAL_SALT, str(email_id), algorithm="sha256").digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def _seal(email_id: uuid.UUID, code: str) -> str:
    return _cipher(email_id).encrypt(code.encode()).decode()


def _unseal(email_id: uuid.UUID, sealed: str) -> str:
    return _cipher(email_id).decrypt(sealed.encode()).decode()
