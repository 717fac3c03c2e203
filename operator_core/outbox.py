"""Durable email delivery from an outbox row: sealed content, sent once by the email worker, retried.

An app keeps one model per kind of email (a row with its sealed content, an
`attempts` count and `sent_at`) and one django-tasks task that calls
`attempt_delivery` with its `Outbox`. The row is written in the transaction of
the request that wants the email, with its first attempt (`queue`), so the
request answers before any SMTP round trip and the email outlives the process
that answered. Each attempt commits the next one before it talks to SMTP, then
sends with the row locked and marks it sent in the same transaction. The
content is sealed under a key derived from SECRET_KEY and the row's id, and
erased once sent or no longer sendable. Used by `agent_auth.outbox` (the
headless codes) and `accounts.password_reset` (reset links); why, and the one
window that can send an email twice: docs/development/decisions.md#headless-path.
"""

from __future__ import annotations

import base64
import logging
import smtplib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.core.mail import send_mail
from django.db import models, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django_tasks_db.models import DBTaskResult

# Seconds before the next attempt, by attempts made so far; the last applies from then on.
RETRY_DELAYS_SECONDS = (10, 30, 60)
# Finished attempts are kept this long, for support questions, then purged.
FINISHED_ATTEMPT_RETENTION = timedelta(days=1)


class Delivery(StrEnum):
    """What one attempt did (the task's stored result)."""

    SENT = "sent"
    FAILED = "failed"
    REFUSED = "refused"
    NOTHING_TO_SEND = "nothing_to_send"


@dataclass(frozen=True)
class Outbox:
    """One kind of email: its rows, its task, and how a row becomes a message."""

    model: type[models.Model]
    # The row's field holding the sealed content ("" once sent or no longer sendable).
    sealed_field: str
    seal_salt: str
    # The django-tasks task that runs `attempt_delivery` for one row id (a string).
    task: Any
    subject: str
    # What the logs call one email ("a verification code"); never its content nor its address.
    what: str
    logger: logging.Logger
    # Retries are scheduled only before this time, read from the row.
    retry_until: Callable[[Any], datetime]
    # The address to send the row to at `now`, or None when it may not be sent any more.
    recipient: Callable[[Any, datetime], str | None]
    # The message body from the row and its unsealed content.
    body: Callable[[Any, str], str]
    # select_related for what `retry_until` and `recipient` read.
    related: tuple[str, ...] = ()

    def pending(self) -> models.QuerySet[Any]:
        return self.model._default_manager.filter(sent_at__isnull=True).exclude(**{self.sealed_field: ""})

    def seal(self, row_id: uuid.UUID, content: str) -> str:
        return _cipher(self.seal_salt, row_id).encrypt(content.encode()).decode()

    def unseal(self, row_id: uuid.UUID, sealed: str) -> str:
        return _cipher(self.seal_salt, row_id).decrypt(sealed.encode()).decode()

    def queue(self, content: str, **fields: Any) -> models.Model:
        """Write a row with `content` sealed, and its first attempt; call inside the caller's transaction."""
        row_id = uuid.uuid4()
        row = self.model._default_manager.create(id=row_id, **{self.sealed_field: self.seal(row_id, content)}, **fields)
        self.task.enqueue(str(row_id))
        return row


def attempt_delivery(outbox: Outbox, row_id: uuid.UUID, *, now: datetime | None = None) -> Delivery:
    """Schedule the next attempt, then send the row's email unless it was sent or may not be sent any more."""
    now = now or timezone.now()
    pending = outbox.pending().select_related(*outbox.related).filter(pk=row_id).first()
    if pending is None:
        return Delivery.NOTHING_TO_SEND
    retry_at = now + timedelta(seconds=RETRY_DELAYS_SECONDS[min(pending.attempts, len(RETRY_DELAYS_SECONDS) - 1)])
    if retry_at < outbox.retry_until(pending):
        outbox.task.using(run_after=retry_at).enqueue(str(row_id))
    with transaction.atomic():
        # Locked until marked sent: a concurrent attempt waits here, then finds it sent.
        row = outbox.pending().select_for_update(of=("self",)).select_related(*outbox.related).filter(pk=row_id).first()
        if row is None:
            return Delivery.NOTHING_TO_SEND
        address = outbox.recipient(row, now)
        if not address:
            _erase(outbox, row)
            return Delivery.NOTHING_TO_SEND
        try:
            content = outbox.unseal(row.pk, getattr(row, outbox.sealed_field))
        except InvalidToken:
            # Sealed under a previous SECRET_KEY: unreadable for good.
            outbox.logger.error("%s: %s could not be unsealed; it is dropped", outbox.logger.name, outbox.what)
            _erase(outbox, row)
            return Delivery.NOTHING_TO_SEND
        row.attempts += 1
        try:
            send_mail(outbox.subject, outbox.body(row, content), None, [address])
        except (smtplib.SMTPException, OSError) as failure:
            return _record_failure(outbox, row, failure)
        row.sent_at = now
        setattr(row, outbox.sealed_field, "")
        row.save(update_fields=["attempts", "sent_at", outbox.sealed_field])
    return Delivery.SENT


def purge_finished_attempts(tasks: list[Any], *, now: datetime) -> int:
    """Delete the worker's records of these tasks' attempts that finished more than a day before `now`."""
    deleted, _ = (
        DBTaskResult.objects.finished()
        .filter(task_path__in=[task.module_path for task in tasks], finished_at__lt=now - FINISHED_ATTEMPT_RETENTION)
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


def _record_failure(outbox: Outbox, row: Any, failure: Exception) -> Delivery:
    # Never the address nor the content: the exception's type and its reply codes only.
    codes = smtp_reply_codes(failure)
    shown = " ".join(str(code) for code in codes) or "no reply code"
    if codes and all(500 <= code < 600 for code in codes):
        outbox.logger.error(
            "%s: the mail server refused %s permanently (%s, %s, attempt %d); it is not retried",
            outbox.logger.name,
            outbox.what,
            type(failure).__name__,
            shown,
            row.attempts,
        )
        setattr(row, outbox.sealed_field, "")  # the attempt already scheduled finds nothing to send
        row.save(update_fields=["attempts", outbox.sealed_field])
        return Delivery.REFUSED
    outbox.logger.error(
        "%s: sending %s failed (%s, %s, attempt %d)",
        outbox.logger.name,
        outbox.what,
        type(failure).__name__,
        shown,
        row.attempts,
    )
    row.save(update_fields=["attempts"])
    return Delivery.FAILED


def _erase(outbox: Outbox, row: Any) -> None:
    setattr(row, outbox.sealed_field, "")
    row.save(update_fields=[outbox.sealed_field])


def _cipher(salt: str, row_id: uuid.UUID) -> Fernet:
    digest = salted_hmac(salt, str(row_id), algorithm="sha256").digest()
    return Fernet(base64.urlsafe_b64encode(digest))
