"""`Idempotency-Key` for the two headless endpoints, kept in the database (docs/headless.md#idempotency-key).

A request with a key first inserts an in-flight row; the unique constraint on
(endpoint, scope, key) decides races between workers, and the loser answers
from the winner's row (422 another body, 409 still running, or a
`FinishedRequest`). A row answers only a caller who holds the secret its answer
was made for: a start's row keeps its claim and no answer; a completion's row
is scoped by its claim token's hash and its answer encrypted under a key
derived from the request body. The views apply the per-IP limits and the
claim's attempts around these calls, never skipped for a replay or a conflict.
Why: docs/development/decisions.md#headless-path.
"""

import base64
import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from agent_auth.errors import IdempotencyKeyReused, RequestInProgress
from agent_auth.models import IdempotencyRecord, IdempotencyState
from operator_core.conf import operator_settings
from operator_core.errors import OperatorError, RateLimited, error_payload

IN_FLIGHT_TIMEOUT_SECONDS = 60
_CIPHER_SALT = "agent_auth.idempotency"


@dataclass(frozen=True)
class IdempotencyTicket:
    """Ownership of an in-flight row: store a response into it, or release it."""

    record_id: int
    cipher_key: bytes


@dataclass(frozen=True)
class StoredResponse:
    status: int
    payload: dict[str, Any]


@dataclass(frozen=True)
class FinishedRequest:
    """The row of a finished request with the same key, scope and body: its claim, and its answer if one is kept."""

    claim_id: uuid.UUID | None
    response: StoredResponse | None


@dataclass(frozen=True)
class Outcome:
    """What an action answers, and the claim it made (a start) for its row to name."""

    payload: dict[str, Any]
    claim_id: uuid.UUID | None = None


def canonical_body(body: object) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def body_fingerprint(body: object) -> str:
    """SHA-256 of the canonical JSON of a request body: what "the same body" means."""
    return hashlib.sha256(canonical_body(body)).hexdigest()


def _cipher_key(endpoint: str, body: object) -> bytes:
    digest = salted_hmac(_CIPHER_SALT, endpoint.encode() + b"\0" + canonical_body(body), algorithm="sha256").digest()
    return base64.urlsafe_b64encode(digest)


def begin_idempotent_request(
    *, endpoint: str, key: str, body: object, scope: str = "", claim_id: uuid.UUID | None = None
) -> IdempotencyTicket | FinishedRequest:
    """Own a new in-flight row for (endpoint, scope, key), or find the finished row already there.

    `claim_id` is the claim a completion's token names, kept on a new row. Raises
    `IdempotencyKeyReused` (naming the row's claim) when the key was used with
    another body and `RequestInProgress` while the first request with the key is
    still running.
    """
    now = timezone.now()
    fingerprint = body_fingerprint(body)
    cipher_key = _cipher_key(endpoint, body)
    rows = IdempotencyRecord.objects.filter(endpoint=endpoint, scope=scope, key=key)
    for _ in range(3):
        # Read before writing: duplicates of a running request then only read, so the
        # first one's writes are not held up by theirs.
        existing = rows.first()
        if existing is None:
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        endpoint=endpoint,
                        scope=scope,
                        key=key,
                        fingerprint=fingerprint,
                        claim_id=claim_id,
                        created_at=now,
                        expires_at=now + timedelta(seconds=operator_settings().idempotency_retention_seconds),
                    )
            except IntegrityError:
                continue  # another worker inserted it first: look at its row
            return IdempotencyTicket(record_id=record.pk, cipher_key=cipher_key)
        if existing.expires_at <= now:
            IdempotencyRecord.objects.filter(pk=existing.pk, expires_at__lte=now).delete()
            continue
        if existing.fingerprint != fingerprint:
            raise IdempotencyKeyReused(
                "This Idempotency-Key was already used with a different body.", claim_id=existing.claim_id
            )
        if existing.state == IdempotencyState.DONE:
            if not existing.response_body:
                return FinishedRequest(claim_id=existing.claim_id, response=None)
            try:
                plain = Fernet(cipher_key).decrypt(existing.response_body.encode())
            except InvalidToken:
                # Sealed under a previous SECRET_KEY: unreadable, so forget it like an expired row.
                IdempotencyRecord.objects.filter(pk=existing.pk).delete()
                continue
            stored = StoredResponse(status=existing.response_status or 200, payload=json.loads(plain))
            return FinishedRequest(claim_id=existing.claim_id, response=stored)
        abandoned = existing.created_at <= now - timedelta(seconds=IN_FLIGHT_TIMEOUT_SECONDS)
        if abandoned and _take_over(existing, now=now):
            return IdempotencyTicket(record_id=existing.pk, cipher_key=cipher_key)
        break
    raise RequestInProgress("A request with this Idempotency-Key is still in progress; retry shortly.")


def _take_over(record: IdempotencyRecord, *, now: Any) -> bool:
    # Conditional on the old start time, so only one worker wins a takeover.
    return (
        IdempotencyRecord.objects.filter(
            pk=record.pk, state=IdempotencyState.IN_FLIGHT, created_at=record.created_at
        ).update(created_at=now)
        == 1
    )


def release_idempotent_request(ticket: IdempotencyTicket) -> None:
    """Forget an in-flight row whose request produced nothing to replay (429, internal error)."""
    IdempotencyRecord.objects.filter(pk=ticket.record_id, state=IdempotencyState.IN_FLIGHT).delete()


def run_idempotent_request(
    ticket: IdempotencyTicket, action: Callable[[], Outcome], *, success_status: int, keep_answer: bool
) -> StoredResponse:
    """Run `action` and finish its row in the same transaction as its writes.

    With `keep_answer` (a completion), the answer is stored sealed, and a
    business refusal (`OperatorError` other than 429 or 5xx) is stored and
    replayed like a success, so repeating a wrong code with the same key does
    not cost a second attempt. Without it (a start), the row keeps only the
    claim the action made, and every `OperatorError` propagates. A 429 or an
    internal error propagates and stores nothing: the caller releases the row
    and the key may be retried.
    """
    with transaction.atomic():
        claim_id: uuid.UUID | None = None
        try:
            outcome = action()
            response, claim_id = StoredResponse(status=success_status, payload=outcome.payload), outcome.claim_id
        except OperatorError as error:
            if not keep_answer or isinstance(error, RateLimited) or error.http_status >= 500:
                raise
            response = StoredResponse(status=error.http_status, payload={"error": error_payload(error)})
        sealed = Fernet(ticket.cipher_key).encrypt(canonical_body(response.payload)).decode() if keep_answer else ""
        finished: dict[str, Any] = {"response_status": response.status, "response_body": sealed}
        if claim_id is not None:
            finished["claim_id"] = claim_id
        IdempotencyRecord.objects.filter(pk=ticket.record_id).update(state=IdempotencyState.DONE, **finished)
    return response


def purge_expired_records(*, now: datetime) -> int:
    """Delete Idempotency-Key records past their 24 hours; return how many went."""
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lt=now).delete()
    return deleted
