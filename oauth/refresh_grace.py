"""The grace window of a rotated refresh token: one rotation, one answer for every caller.

For `refresh_token_grace_seconds` after a rotation, the same client presenting
the rotated token gets the rotation's answer again (the same successor and
access token) after every rule of a refresh has run again; otherwise a rotated
token presented again revokes its family (RFC 9700 §4.14.2). The answer is
kept sealed under a key derived from the rotated token, which the database
holds only as a digest, and the presented token's row is locked for the whole
token request so that concurrent refreshes make one rotation. The rules, and
why: docs/development/decisions.md#refresh-tokens.

This module owns those rules and the audit events; `oauth.validators` calls it
from small hooks and leaves live tokens, and their rotation, to DOT.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.db.models import F
from django.utils import timezone
from oauth2_provider.models import get_refresh_token_model
from oauth2_provider.settings import oauth2_settings

from oauth import audit_trail
from oauth.models import RefreshRotation
from operator_core.conf import operator_settings
from operator_core.request_log import annotate, current_request_id
from operator_core.telemetry import metrics

RefreshToken = get_refresh_token_model()

audit_logger = logging.getLogger("operator.audit")

# A replay within the window, answered with the rotation's answer.
EVENT_GRACE_REPLAY = "refresh_token.grace_replay"
# A rotated token presented outside the window, or after its successor was used: the family is revoked.
EVENT_REUSE_FAMILY_REVOKED = "refresh_token.reuse_family_revoked"
# A token no longer live, refused without revoking anything: within the window, or nothing left to revoke.
EVENT_REPLAY_REFUSED = "refresh_token.replay_refused"

REASON_OUTSIDE_WINDOW = "outside_window"
REASON_SUCCESSOR_USED = "successor_used"
REASON_SUCCESSOR_REVOKED = "successor_revoked"
REASON_FAMILY_REVOKED = "family_revoked"
REASON_OTHER_CLIENT = "other_client"
REASON_ANSWER_UNREADABLE = "answer_unreadable"

_HKDF_INFO = b"service-operator/refresh-rotation-answer/v1"
_SALT_BYTES = 16
_NONCE_BYTES = 12
_KEY_BYTES = 32
# Expired answers deleted per token request; the rest go on the next one or with purge_expired.
_SWEEP_BATCH = 100
_REPLAY_ATTRIBUTE = "operator_refresh_replay"


@dataclass(frozen=True)
class _Replay:
    answer: dict[str, Any]
    access_token_expires: datetime
    rotated: Any
    client_id: str


# --- sealing ----------------------------------------------------------------------------


def token_checksum(token: str) -> str:
    """DOT's `token_checksum` of a refresh or access token: how a token is stored, and found again."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _key(refresh_token: str, salt: bytes) -> bytes:
    # A refresh token carries about 178 random bits (oauthlib's generator), so HKDF
    # suffices: no password stretching is needed. A digest of the token, which is all
    # the database holds, gives nothing of HKDF's HMAC-based extract.
    hkdf = HKDF(algorithm=hashes.SHA256(), length=_KEY_BYTES, salt=salt, info=_HKDF_INFO)
    return hkdf.derive(refresh_token.encode("utf-8"))


def _associated_data(*, rotated_id: int, successor_id: int) -> bytes:
    # Binds a sealed answer to its rows: moved onto another rotation, it no longer opens.
    return f"refresh-rotation:{rotated_id}:{successor_id}".encode()


def seal_answer(
    answer: dict[str, Any], *, refresh_token: str, rotated_id: int, successor_id: int
) -> tuple[bytes, bytes, bytes]:
    """(salt, nonce, ciphertext) of `answer`, openable only with `refresh_token`, the rotated token."""
    salt = os.urandom(_SALT_BYTES)
    nonce = os.urandom(_NONCE_BYTES)
    plaintext = json.dumps(answer, separators=(",", ":")).encode()
    associated = _associated_data(rotated_id=rotated_id, successor_id=successor_id)
    return salt, nonce, AESGCM(_key(refresh_token, salt)).encrypt(nonce, plaintext, associated)


def open_answer(rotation: RefreshRotation, *, refresh_token: str) -> dict[str, Any]:
    """The answer sealed in `rotation`; raises cryptography's InvalidTag for any other token or an altered row."""
    associated = _associated_data(rotated_id=rotation.rotated_id, successor_id=rotation.successor_id)
    aead = AESGCM(_key(refresh_token, bytes(rotation.salt)))
    return json.loads(aead.decrypt(bytes(rotation.nonce), bytes(rotation.sealed_answer), associated))


# --- the token request ------------------------------------------------------------------


def lock_presented_refresh_token(refresh_token: str, *, application_id: int | None = None) -> Any:
    """The row of the presented refresh token, locked until the request commits; None when unknown.

    Several rows may share a digest (DOT's uniqueness is digest and revocation
    time); like DOT, prefer the live one, then the latest revoked. With
    `application_id`, only that client's rows count (RFC 7009 §2.1).
    """
    rows = RefreshToken.objects.select_for_update().filter(token_checksum=token_checksum(refresh_token))
    if application_id is not None:
        rows = rows.filter(application_id=application_id)
    return rows.order_by(F("revoked").desc(nulls_first=True)).first()


def admit_rotated_refresh_token(rotated: Any, *, refresh_token: str, client: Any, request: Any) -> bool:
    """Judge a presented refresh token that is no longer live; True admits it as a replay.

    - Outside the window (or with the window at 0), or once the successor has been
      used: refused and the family revoked, as RFC 9700 §4.14.2 asks of a reuse.
    - Within the window, by another client, or after the successor (or the family)
      was revoked: refused, and nothing else revoked.
    - Otherwise admitted: the oauthlib request is set up like DOT's own
      `validate_refresh_token` does, and the caller runs every other rule of a
      refresh (lifetime, organization, role) before `answer_replay` answers.

    A token revoked without ever being rotated has no kept answer, so it is
    outside any window: its family is revoked, as DOT does today.
    """
    now = timezone.now()
    rotation = RefreshRotation.objects.filter(rotated=rotated).first()
    if rotation is None or not _within_window(rotation, now=now):
        _revoke_family(rotated, client=client, reason=REASON_OUTSIDE_WINDOW)
        return False
    if rotated.application_id != client.pk:
        # Not revoked: the token's own client still holds it and may retry within the window.
        _audit(EVENT_REPLAY_REFUSED, rotated=rotated, client_id=client.client_id, reason=REASON_OTHER_CLIENT)
        return False
    # Locked as well: a rotation of the successor in flight finishes first, and is seen.
    successor = (
        RefreshToken.objects.select_for_update(of=("self",))
        .select_related("access_token")
        .get(pk=rotation.successor_id)
    )
    if successor.revoked is not None:
        if _was_rotated(successor):
            _revoke_family(rotated, client=client, reason=REASON_SUCCESSOR_USED)
        else:
            _audit(EVENT_REPLAY_REFUSED, rotated=rotated, client_id=client.client_id, reason=REASON_SUCCESSOR_REVOKED)
        return False
    if successor.access_token is None:
        # Its access token was revoked on its own: DOT refuses such an orphan, so no answer includes it.
        _audit(EVENT_REPLAY_REFUSED, rotated=rotated, client_id=client.client_id, reason=REASON_SUCCESSOR_REVOKED)
        return False
    try:
        answer = open_answer(rotation, refresh_token=refresh_token)
    except InvalidTag:
        # The digest matched, so only an altered row fails to open: refuse rather than guess.
        _audit(EVENT_REPLAY_REFUSED, rotated=rotated, client_id=client.client_id, reason=REASON_ANSWER_UNREADABLE)
        return False
    request.user = rotated.user
    request.refresh_token = refresh_token
    request.refresh_token_instance = rotated
    replay = _Replay(
        answer=answer,
        access_token_expires=successor.access_token.expires,
        rotated=rotated,
        client_id=client.client_id,
    )
    setattr(request, _REPLAY_ATTRIBUTE, replay)
    return True


def is_replay(request: Any) -> bool:
    """True when `admit_rotated_refresh_token` admitted this request as a replay."""
    return getattr(request, _REPLAY_ATTRIBUTE, None) is not None


def answer_replay(token: dict[str, Any], request: Any) -> None:
    """Turn oauthlib's fresh `token` into the kept answer of the rotation, and record the replay.

    Nothing is minted or stored: the same refresh token and the same access token
    as the first answer, with `expires_in` counting down from the same expiry.
    """
    replay: _Replay = getattr(request, _REPLAY_ATTRIBUTE)
    token.clear()
    token.update(replay.answer)
    token["expires_in"] = max(0, int((replay.access_token_expires - timezone.now()).total_seconds()))
    _audit(EVENT_GRACE_REPLAY, rotated=replay.rotated, client_id=replay.client_id)
    metrics.count_refresh_grace_replay()


def remember_rotation(token: dict[str, Any], request: Any, *, rotated: Any) -> None:
    """Keep the answer to the rotation of `rotated` for the window, sealed; sweep answers whose window ended.

    `rotated` is the refresh token this request presented (None for other grants).
    Runs in the token request's transaction, so the answer exists exactly when the
    rotation does.
    """
    now = timezone.now()
    purge_expired_rotations(now=now, limit=_SWEEP_BATCH, skip_locked=True)
    window = operator_settings().refresh_token_grace_seconds
    new_refresh_token = token.get("refresh_token")
    if rotated is None or window <= 0 or not new_refresh_token:
        return
    successor = RefreshToken.objects.filter(
        token_checksum=token_checksum(new_refresh_token), revoked__isnull=True
    ).first()
    if successor is None:
        return
    answer = {key: value for key, value in token.items() if key != "expires_in"}
    salt, nonce, sealed = seal_answer(
        answer, refresh_token=request.refresh_token, rotated_id=rotated.pk, successor_id=successor.pk
    )
    RefreshRotation.objects.create(
        rotated=rotated,
        successor=successor,
        salt=salt,
        nonce=nonce,
        sealed_answer=sealed,
        created=now,
        expires=now + timedelta(seconds=window),
    )


def purge_expired_rotations(*, now: datetime, limit: int | None = None, skip_locked: bool = False) -> int:
    """Delete kept answers whose window has ended; their number.

    `skip_locked` leaves rows another transaction is deleting to it, so that two
    token requests sweeping at once on PostgreSQL never wait on, or deadlock with,
    each other.
    """
    expired = RefreshRotation.objects.filter(expires__lte=now).order_by("pk").values_list("pk", flat=True)
    if skip_locked:
        expired = expired.select_for_update(skip_locked=True)
    if limit is not None:
        expired = expired[:limit]
    ids = list(expired)
    if not ids:
        return 0
    deleted, _ = RefreshRotation.objects.filter(pk__in=ids).delete()
    return deleted


# --- rules ------------------------------------------------------------------------------


def _within_window(rotation: RefreshRotation, *, now: datetime) -> bool:
    # The row's own expiry is what was kept; the setting as it is now may be shorter (0 turns it off at once).
    window = timedelta(seconds=operator_settings().refresh_token_grace_seconds)
    return now < rotation.expires and now < rotation.created + window


def _was_rotated(refresh_token: Any) -> bool:
    # A rotation adds the next member to the family, and a replay adds none, so a
    # later member means this token was used. Members are created one after the
    # other under the lock of their predecessor, so their ids ascend.
    return RefreshToken.objects.filter(token_family=refresh_token.token_family, pk__gt=refresh_token.pk).exists()


def _revoke_family(rotated: Any, *, client: Any, reason: str) -> None:
    """Revoke every token of the family, as DOT's reuse protection does, and record it.

    A family with no live token left (revoked before, or signed out) has nothing
    to revoke: that presentation is recorded as refused, so the audit trail's
    revocations are the ones that ended a connection.
    """
    family = rotated.token_family
    if not oauth2_settings.REFRESH_TOKEN_REUSE_PROTECTION or not family:
        return
    if not RefreshToken.objects.filter(token_family=family, revoked__isnull=True).exists():
        _audit(EVENT_REPLAY_REFUSED, rotated=rotated, client_id=client.client_id, reason=REASON_FAMILY_REVOKED)
        return
    revoke_token_family(family)
    metrics.count_family_revocation(reason)
    audit_trail.record_refresh_token_reuse(rotated=rotated, client=client, reason=reason)
    _audit(EVENT_REUSE_FAMILY_REVOKED, rotated=rotated, client_id=client.client_id, reason=reason)


def revoke_token_family(token_family: uuid.UUID) -> None:
    """Revoke every refresh token of the family, delete its access tokens and forget its kept answers.

    With the kept answers gone, no rotated token of the family is answered again
    within its window: what a replay would hand out is revoked.
    """
    RefreshToken.revoke_family(token_family)
    RefreshRotation.objects.filter(rotated__token_family=token_family).delete()


def _audit(event: str, *, rotated: Any, client_id: str, reason: str | None = None) -> None:
    """One structured record on `operator.audit`; identifiers only, never a token."""
    fields: dict[str, Any] = {
        "event": event,
        "reason": reason,
        "client_id": client_id,
        "user_id": rotated.user_id,
        "organization_id": str(rotated.organization_id),
        "token_family": str(rotated.token_family),
        "refresh_token_id": rotated.pk,
        "request_id": current_request_id(),
    }
    annotate(oauth_event=event)
    # `request` is where the JSON formatter (operator_core.log_format) finds a record's fields.
    audit_logger.info("%s (%s)", event, reason or "answered", extra={"request": fields})
