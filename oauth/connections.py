"""OAuth connections: the live grants people gave clients (docs/managing-connections.md).

A connection is one refresh-token family: one consent of one person, for one
client, into one organization, kept alive by rotation. It is live while its
newest refresh token is neither revoked nor past its lifetime. A connection an
enterprise's provider granted (enterprise-managed authorization) has no
refresh token: it is the person's live access tokens of that client and
provider, and ends when the last of them expires. It ends when
the client revokes any of its refresh tokens (`end_revoked_connection`), or
when a refresh is refused because the person lost their role or the
organization's client policy no longer admits the client
(`end_refused_connection`), or when its refresh token expires unused
(recorded by `record_expired_connections`); the service offers no control to
end one itself.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from identity_providers.models import IdentityProvider
from oauth import audit_trail
from oauth.models import AccessToken, Application, RefreshToken
from oauth.refresh_grace import lock_presented_refresh_token, revoke_token_family, token_checksum
from operator_core.conf import operator_settings
from operator_core.telemetry import metrics
from organizations.models import Organization

# Why a family was revoked here, as the metrics name it (docs/operations.md#metrics).
FAMILY_REVOKED_REFRESH_REFUSED = "refresh_refused"
FAMILY_REVOKED_BY_CLIENT = "revoked"


@dataclass(frozen=True)
class OAuthConnection:
    person: User
    organization: Organization
    application: Application
    scopes: list[str]
    authorized_at: datetime
    # The last code exchange or refresh: when the client last obtained tokens.
    last_token_at: datetime
    # The enterprise's provider whose ID-JAGs granted it: no consent here and no refresh token.
    granted_by: IdentityProvider | None = None


def _live_heads(now: datetime) -> QuerySet[RefreshToken]:
    lifetime = timedelta(seconds=operator_settings().refresh_token_lifetime_seconds)
    return (
        RefreshToken.objects.filter(
            revoked__isnull=True,
            token_family__isnull=False,
            organization__isnull=False,
            access_token__isnull=False,
            created__gt=now - lifetime,
        )
        .select_related("user", "organization", "application", "access_token")
        .order_by("-created", "-pk")
    )


def _connection(head: RefreshToken) -> OAuthConnection:
    return OAuthConnection(
        person=head.user,
        # `_live_heads` keeps only tokens bound to an organization.
        organization=cast(Organization, head.organization),
        application=head.application,
        scopes=(head.access_token.scope or "").split(),
        authorized_at=head.authorized_at or head.created,
        last_token_at=head.created,
    )


def oauth_connections(
    *, person_id: int | None = None, organization_id: uuid.UUID | None = None
) -> list[OAuthConnection]:
    """Live OAuth connections, of a consent or granted by a provider, narrowed by each argument given."""
    heads = _live_heads(timezone.now())
    if person_id is not None:
        heads = heads.filter(user_id=person_id)
    if organization_id is not None:
        heads = heads.filter(organization_id=organization_id)
    granted = _provider_connections(person_id=person_id, organization_id=organization_id)
    return [_connection(head) for head in heads] + granted


def _provider_connections(*, person_id: int | None, organization_id: uuid.UUID | None) -> list[OAuthConnection]:
    """Connections an enterprise's provider granted (oauth/id_jag_grant.py): no refresh token keeps them.

    One per person, organization, client and provider, live while one of its access
    tokens is: from its oldest live token to its newest, with the newest one's scopes.
    """
    tokens = (
        AccessToken.objects.filter(expires__gt=timezone.now(), granted_by__isnull=False, organization__isnull=False)
        .select_related("user", "organization", "application", "granted_by")
        .order_by("-created", "-pk")
    )
    if person_id is not None:
        tokens = tokens.filter(user_id=person_id)
    if organization_id is not None:
        tokens = tokens.filter(organization_id=organization_id)
    found: dict[tuple[int, uuid.UUID, int, int], OAuthConnection] = {}
    for token in tokens:
        key = (token.user_id, token.organization_id, token.application_id, token.granted_by_id)
        newest = found.get(key)
        found[key] = OAuthConnection(
            person=token.user,
            organization=cast(Organization, token.organization),
            application=token.application,
            scopes=newest.scopes if newest else (token.scope or "").split(),
            authorized_at=token.created,
            last_token_at=newest.last_token_at if newest else token.created,
            granted_by=token.granted_by,
        )
    return list(found.values())


def record_expired_connections(*, now: datetime) -> int:
    """Write each connection whose refresh token DOT's `clear_expired` is about to delete to the audit trail.

    The same rows `clear_expired` deletes as idle (a live token whose access
    token expired a refresh lifetime ago), so that each expiry is recorded once,
    and the person can read why the connection stopped
    (docs/managing-connections.md#why-a-connection-stopped). Run it just before
    `clear_expired`; returns how many were recorded.
    """
    cutoff = now - timedelta(seconds=operator_settings().refresh_token_lifetime_seconds)
    expiring = RefreshToken.objects.filter(
        revoked__isnull=True, organization__isnull=False, access_token__expires__lte=cutoff
    ).select_related("application")
    recorded = 0
    for refresh_token in expiring.iterator():
        audit_trail.record_connection_expiry(refresh_token=refresh_token)
        recorded += 1
    return recorded


def record_staff_revocations(refresh_tokens: QuerySet[RefreshToken], *, actor_id: int | None) -> int:
    """Write each live connection among `refresh_tokens`, which staff are revoking in the admin, to the trail.

    Staff cannot delete a client that holds tokens (DOT's admin forbids deleting
    tokens), so revoking them is how staff end a client's connections, before
    removing it once the daily job has purged them. Call it just before the
    revocation, in its transaction; returns how many were recorded.
    """
    heads = _live_heads(timezone.now()).filter(pk__in=refresh_tokens.values("pk"))
    recorded = 0
    for head in heads:
        audit_trail.record_staff_revocation(refresh_token=head, actor_id=actor_id)
        recorded += 1
    return recorded


def end_refused_connection(refresh_token: RefreshToken, *, client: Application, reason: str) -> None:
    """End the connection of `refresh_token`, whose refresh is refused for `reason`, and record why.

    The whole family goes: its live refresh token, its access tokens, and the
    answers kept for its grace windows, so that no rotated token of it is
    answered again either (`oauth.refresh_grace`). Refusing alone would only
    pause the connection: loosening the policy, or giving the role back, would
    make the same refresh token work again, with no new consent. The client is
    answered `invalid_grant` as before (docs/authentication.md#refresh-tokens);
    this makes the answer final. It runs in the token request's transaction,
    which commits a refusal like any other answer (`oauth.endpoint_views.TokenView`).
    """
    if refresh_token.token_family is None:
        # DOT's family revocation skips a token without a family (one made outside the
        # token endpoint): revoke that token and its access token alone.
        refresh_token.revoke()
    else:
        revoke_token_family(refresh_token.token_family)
    metrics.count_family_revocation(FAMILY_REVOKED_REFRESH_REFUSED)
    audit_trail.record_refresh_refused(refresh_token=refresh_token, client=client, reason=reason)


@transaction.atomic
def end_revoked_connection(token: str, *, client: Application) -> bool:
    """End the connection `token` belongs to, a refresh or access token of `client` sent to the revocation endpoint.

    RFC 7009 §2.1: revoking a refresh token ends the grant. Any member of the
    family counts, the live one or one rotated before, whose answer a grace
    window still keeps; so does an access token, whose refresh token DOT
    revokes with it (`revoke_access_token`). The family's refresh tokens,
    access tokens and kept answers all go (`revoke_token_family`), so no token
    of it is answered again, within a window or not. The revocation is audited
    when it ended something live. False when `token` belongs to no connection of `client`.
    """
    token_type = audit_trail.TOKEN_TYPE_REFRESH
    presented = lock_presented_refresh_token(token, application_id=client.pk)
    if presented is None:
        token_type = audit_trail.TOKEN_TYPE_ACCESS
        presented = (
            RefreshToken.objects.select_for_update()
            .filter(access_token__token_checksum=token_checksum(token), application_id=client.pk)
            .first()
        )
    if presented is None:
        return False
    family = presented.token_family
    live = RefreshToken.objects.filter(token_family=family) if family else RefreshToken.objects.filter(pk=presented.pk)
    live = live.filter(revoked__isnull=True)
    # Locking the live member waits for a rotation of it in flight; the query after it sees the successor.
    list(live.select_for_update())
    if not live.exists():
        return True
    if family is None:
        # DOT's family revocation skips a token without a family (one made outside the token endpoint).
        presented.revoke()
    else:
        revoke_token_family(family)
    metrics.count_family_revocation(FAMILY_REVOKED_BY_CLIENT)
    audit_trail.record_connection_revocation(refresh_token=presented, client=client, token_type=token_type)
    return True
