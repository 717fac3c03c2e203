"""The authorization server's events in the audit trail (docs/operations.md#audit-trail).

One function per event, each appending one row through `audit.services.record_event`
in the caller's transaction: a consent (granted or denied, with the organization
chosen), a code exchanged, tokens refreshed, a refresh refused because of the
role or the client policy, a token revoked, a replayed code and a reused
refresh token (each refusal answered `invalid_grant` and revoking what it
reached), a connection that expired unused and its token presented again, a client
ID metadata document refused, and a connection ended by staff in the admin. Rows carry the person,
the organization, the client's id and name and the scopes; never a token, a code or
a secret: tokens are looked up here by their SHA-256 checksum, the way DOT stores
them, and the checksum is not kept (an expiry keeps a keyed digest of it, `expired_token_digest`).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from django.core.cache import cache
from django.utils import timezone
from django.utils.crypto import salted_hmac
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749.errors import AccessDeniedError, InvalidClientIdError, InvalidGrantError

from audit.models import DETAIL_EXPIRED_TOKEN, OUTCOME_OK, AuditAction, AuditEvent
from audit.selectors import expired_connection
from audit.services import record_event
from oauth.models import Application

GRANT_AUTHORIZATION_CODE = "authorization_code"
GRANT_REFRESH_TOKEN = "refresh_token"
TOKEN_TYPE_ACCESS = "access_token"
TOKEN_TYPE_REFRESH = "refresh_token"
# Why a refresh was refused and its connection ended (`record_refresh_refused`).
REASON_ROLE = "role"
REASON_CLIENT_POLICY = "client_policy"
REASON_EXPIRED = "expired"
_DIGEST_SALT = "oauth.audit_trail.expired-refresh-token"
_CLIENT_ID_LENGTH: int = AuditEvent._meta.get_field("client_id").max_length or 255
# A person's refused document is recorded once per client while DOT waits to fetch it again.
_DOCUMENT_REFUSAL_PREFIX = "oauth.document-refusal-recorded:"


def _checksum(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def record_authorization_decision(
    *, user_id: int, client_id: str, organization_id: uuid.UUID | None, granted: bool, scopes: list[str]
) -> None:
    """A consent: `ok` when granted, `access_denied` (what the client is answered) when denied."""
    client_name = Application.objects.filter(client_id=client_id).values_list("name", flat=True).first() or ""
    record_event(
        AuditAction.AUTHORIZATION,
        outcome=OUTCOME_OK if granted else AccessDeniedError.error,
        person_id=user_id,
        organization_id=organization_id,
        client_id=client_id,
        client_name=client_name,
        detail={"scopes": scopes},
    )


def record_tokens_issued(
    *, grant_type: str, user_id: int, organization_id: str | None, application: Application, scopes: list[str]
) -> None:
    """A code exchanged or tokens refreshed; the client counts as used (`Application.last_used_at`)."""
    action = AuditAction.CODE_EXCHANGE if grant_type == GRANT_AUTHORIZATION_CODE else AuditAction.REFRESH
    record_event(
        action,
        person_id=user_id,
        organization_id=organization_id,
        client_id=application.client_id,
        client_name=application.name,
        detail={"scopes": scopes},
    )
    Application.objects.filter(pk=application.pk).update(last_used_at=timezone.now())


def record_token_revocation(*, token: str, application: Any) -> None:
    """A revocation (RFC 7009) of a live access token of `application` of no connection; call it before DOT deletes it.

    Nothing is recorded for a token that is unknown or another client's: the
    endpoint answers 200 whatever it was sent.
    """
    if getattr(application, "pk", None) is None:
        return
    lookup = {"token_checksum": _checksum(token), "application_id": application.pk}
    holder = get_access_token_model().objects.filter(**lookup).values("user_id", "organization_id").first()
    if holder is None:
        return
    record_event(
        AuditAction.REVOCATION,
        person_id=holder["user_id"],
        organization_id=holder["organization_id"],
        client_id=application.client_id,
        client_name=application.name,
        detail={"token_type": TOKEN_TYPE_ACCESS},
    )


def record_connection_revocation(*, refresh_token: Any, client: Any, token_type: str) -> None:
    """A revocation (RFC 7009) of a token of `client` that ended a live connection, its whole family.

    `token_type` is what the client sent (`TOKEN_TYPE_REFRESH` or `TOKEN_TYPE_ACCESS`);
    `refresh_token` is the row of the family it reached. The endpoint answers 200
    whatever it was sent, so nothing is recorded for a token that is unknown,
    another client's, or of a connection that had ended already.
    """
    record_event(
        AuditAction.REVOCATION,
        person_id=refresh_token.user_id,
        organization_id=refresh_token.organization_id,
        client_id=client.client_id,
        client_name=client.name,
        detail={"token_type": token_type},
    )


def record_refresh_token_reuse(*, rotated: Any, client: Any, reason: str) -> None:
    """A rotated refresh token presented again: answered `invalid_grant`, its family revoked (RFC 9700 §4.14.2).

    `rotated` is the presented token's row; `reason` is `oauth.refresh_grace`'s
    (outside the grace window, or after its successor was used).
    """
    _record_refused_refresh(AuditAction.REFRESH_REUSE, refresh_token=rotated, client=client, reason=reason)


def record_refresh_refused(*, refresh_token: Any, client: Application, reason: str) -> None:
    """A refresh refused `invalid_grant` because of `reason`, which ended its connection: the family is revoked.

    `reason` is `REASON_ROLE` (the person no longer holds admin or member in the
    bound organization) or `REASON_CLIENT_POLICY` (the organization's client
    policy no longer admits the client); docs/managing-connections.md#how-access-ends.
    """
    _record_refused_refresh(AuditAction.REFRESH, refresh_token=refresh_token, client=client, reason=reason)


def _record_refused_refresh(action: AuditAction, *, refresh_token: Any, client: Any, reason: str) -> None:
    record_event(
        action,
        outcome=InvalidGrantError.error,
        person_id=refresh_token.user_id,
        organization_id=refresh_token.organization_id,
        client_id=client.client_id,
        client_name=client.name,
        detail={"reason": reason},
    )


def expired_token_digest(checksum: str) -> str:
    """What a `CONNECTION_EXPIRY` keeps of its refresh token: an HMAC, under the site's key, of DOT's checksum.

    Recognises the token when it is presented again, and nothing else: it is
    neither the token nor the checksum the token table held, so the trail,
    which outlives that table, cannot be matched against a copy of it.
    """
    return salted_hmac(_DIGEST_SALT, checksum, algorithm="sha256").hexdigest()


def record_connection_expiry(*, refresh_token: Any) -> None:
    """A connection whose refresh token expired unused, recorded just before the token is deleted.

    Called by `oauth.connections.record_expired_connections` from `purge_expired`.
    """
    record_event(
        AuditAction.CONNECTION_EXPIRY,
        person_id=refresh_token.user_id,
        organization_id=refresh_token.organization_id,
        client_id=refresh_token.application.client_id,
        client_name=refresh_token.application.name,
        detail={DETAIL_EXPIRED_TOKEN: expired_token_digest(refresh_token.token_checksum)},
    )


def record_expired_refresh(*, refresh_token: str, client: Any, row: Any = None) -> None:
    """A refresh refused `invalid_grant` because its connection had expired unused.

    `row` is the token's row while it is still there (past its 30 days, before
    the daily job deleted it). Without one, the token is recognised by its
    connection's `CONNECTION_EXPIRY` (`expired_token_digest`), for the same
    client; a token never seen, or another client's, records nothing.
    """
    if row is not None:
        person_id, organization_id = row.user_id, row.organization_id
    else:
        found = expired_connection(expired_token_digest(_checksum(refresh_token)), client_id=client.client_id)
        if found is None:
            return
        person_id, organization_id = found
    record_event(
        AuditAction.REFRESH,
        outcome=InvalidGrantError.error,
        person_id=person_id,
        organization_id=organization_id,
        client_id=client.client_id,
        client_name=client.name,
        detail={"reason": REASON_EXPIRED},
    )


def record_client_document_refusal(*, person_id: int, client_id: str, reason: str) -> None:
    """A Client ID Metadata Document that could not be used, met by a signed-in person at the authorization endpoint.

    `reason` is the `oauth.cimd.CimdFailure` name. Recorded once per person and
    client for as long as DOT backs off the document (a reload or a retrying
    client adds nothing), and not at all for an id longer than the trail keeps.
    """
    if len(client_id) > _CLIENT_ID_LENGTH:
        return
    key = f"{_DOCUMENT_REFUSAL_PREFIX}{person_id}:{_checksum(client_id)}"
    if not cache.add(key, True, oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS):
        return
    record_event(
        AuditAction.CLIENT_DOCUMENT_REFUSAL,
        outcome=InvalidClientIdError.error,
        person_id=person_id,
        client_id=client_id,
        detail={"reason": reason},
    )


def record_staff_revocation(*, refresh_token: Any, actor_id: int | None) -> None:
    """A live connection that staff end by revoking its tokens in the Django admin."""
    record_event(
        AuditAction.STAFF_REVOCATION,
        person_id=refresh_token.user_id,
        organization_id=refresh_token.organization_id,
        client_id=refresh_token.application.client_id,
        client_name=refresh_token.application.name,
        actor_id=actor_id,
    )


def record_code_replay(*, application: Application, token_family: uuid.UUID | None) -> None:
    """A code exchanged twice: answered `invalid_grant`, its tokens revoked (OAuth 2.1 §4.1.3)."""
    holder = None
    if token_family is not None:
        holder = (
            get_refresh_token_model()
            .objects.filter(token_family=token_family)
            .values("user_id", "organization_id")
            .first()
        )
    record_event(
        AuditAction.CODE_REPLAY,
        outcome=InvalidGrantError.error,
        person_id=holder["user_id"] if holder else None,
        organization_id=holder["organization_id"] if holder else None,
        client_id=application.client_id,
        client_name=application.name,
    )
