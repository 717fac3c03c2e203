"""`Idempotency-Key` for the two headless endpoints, kept in the database (docs/headless.md#idempotency-key).

A request with a key first inserts an in-flight row; the unique constraint on
(endpoint, key) decides races between workers. The loser looks at the winner's
row: another body → `idempotency_key_reused` (422); still running →
`request_in_progress` (409); done → the stored response is replayed. Rows live
24 hours; an expired one is ignored and replaced when its key comes back, and
`manage.py purge_expired` deletes the rest (off the request path). An in-flight row left
behind by a crashed worker may be taken over after `IN_FLIGHT_TIMEOUT_SECONDS`.

The stored response is encrypted with a key derived from SECRET_KEY and the
request body itself, so only a caller sending that same body (which holds the
email, or the claim token and code) can read the token it contains.
"""

import base64
import hashlib
import json
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


def canonical_body(body: object) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def body_fingerprint(body: object) -> str:
    """SHA-256 of the canonical JSON of a request body: what "the same body" means."""
    return hashlib.sha256(canonical_body(body)).hexdigest()


def _cipher_key(endpoint: str, body: object) -> bytes:
    digest = salted_hmac(_CIPHER_SALT, endpoint.encode() + b"\0" + canonical_body(body), algorithm="sha256").digest()
    return base64.urlsafe_b64encode(digest)


def begin_idempotent_request(*, endpoint: str, key: str, body: object) -> IdempotencyTicket | StoredResponse:
    """Own a new in-flight row for (endpoint, key), or answer from the row already there.

    Raises `IdempotencyKeyReused` when the key was used with another body and
    `RequestInProgress` while the first request with the key is still running.
    """
    now = timezone.now()
    fingerprint = body_fingerprint(body)
    cipher_key = _cipher_key(endpoint, body)
    for _ in range(3):
        # Read before writing: duplicates of a running request then only read, so the
        # first one's writes are not held up by theirs.
        existing = IdempotencyRecord.objects.filter(endpoint=endpoint, key=key).first()
        if existing is None:
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        endpoint=endpoint,
                        key=key,
                        fingerprint=fingerprint,
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
            raise IdempotencyKeyReused("This Idempotency-Key was already used with a different body.")
        if existing.state == IdempotencyState.DONE:
            try:
                plain = Fernet(cipher_key).decrypt(existing.response_body.encode())
            except InvalidToken:
                # Sealed under a previous SECRET_KEY: unreadable, so forget it like an expired row.
                IdempotencyRecord.objects.filter(pk=existing.pk).delete()
                continue
            return StoredResponse(status=existing.response_status or 200, payload=json.loads(plain))
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
    ticket: IdempotencyTicket, action: Callable[[], dict[str, Any]], *, success_status: int
) -> StoredResponse:
    """Run `action` and store its outcome in the same transaction as its writes.

    A business refusal (`OperatorError` other than 429 or 5xx) is stored and
    replayed like a success, so repeating a wrong code with the same key does not
    cost a second attempt. A 429 or an internal error propagates and stores
    nothing: the caller releases the row and the key may be retried.
    """
    with transaction.atomic():
        try:
            response = StoredResponse(status=success_status, payload=action())
        except OperatorError as error:
            if isinstance(error, RateLimited) or error.http_status >= 500:
                raise
            response = StoredResponse(status=error.http_status, payload={"error": error_payload(error)})
        sealed = Fernet(ticket.cipher_key).encrypt(canonical_body(response.payload)).decode()
        IdempotencyRecord.objects.filter(pk=ticket.record_id).update(
            state=IdempotencyState.DONE, response_status=response.status, response_body=sealed
        )
    return response


def purge_expired_records(*, now: datetime) -> int:
    """Delete Idempotency-Key records past their 24 hours; return how many went."""
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lt=now).delete()
    return deleted
