"""The outbox of verification emails: written with the claim, sent by the email worker, once.

`queue_verification_email`, called inside `start_claim`'s transaction, writes
the claim's one `VerificationEmail` (its code sealed) and a
`deliver_verification_email` task for the email worker (`manage.py db_worker`,
docs/operations.md#the-email-worker). The delivery itself, its sealing and its
retries are `operator_core.outbox`'s, shared with the password reset emails.
Why, and the one window that can send a code twice:
docs/development/decisions.md#headless-path.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from django_tasks import task

from agent_auth.models import Claim, VerificationEmail
from operator_core.conf import operator_settings
from operator_core.outbox import Outbox, attempt_delivery

logger = logging.getLogger(__name__)

EMAIL_SUBJECT = "Your Service Operator code"


def _recipient(email: VerificationEmail, now: datetime) -> str | None:
    user = email.claim.user
    if email.claim.expires_at <= now or user is None or not user.is_active:
        return None
    return user.email


def _body(email: VerificationEmail, code: str) -> str:
    minutes = operator_settings().headless_code_lifetime_seconds // 60
    return (
        f"Your Service Operator verification code is {code}\n\n"
        f"It is valid for {minutes} minutes. Give it only to the agent you are connecting.\n"
        "If you did not ask for it, ignore this email: nothing happens without the code.\n"
    )


def queue_verification_email(*, claim: Claim, code: str) -> None:
    """Write the claim's email and its first attempt; call inside the claim's transaction."""
    VERIFICATION_EMAILS.queue(code, claim=claim)


@task()
def deliver_verification_email(email_id: str) -> str:
    """One attempt to send the email `email_id` (run by the email worker)."""
    return attempt_delivery(VERIFICATION_EMAILS, uuid.UUID(email_id))


VERIFICATION_EMAILS = Outbox(
    model=VerificationEmail,
    sealed_field="sealed_code",
    seal_salt="agent_auth.verification_email",
    task=deliver_verification_email,
    subject=EMAIL_SUBJECT,
    what="a verification code",
    logger=logger,
    retry_until=lambda email: email.claim.expires_at,
    recipient=_recipient,
    body=_body,
    related=("claim__user",),
)
