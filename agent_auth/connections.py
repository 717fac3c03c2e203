"""Headless connections: completed claims whose token is still valid (docs/managing-connections.md).

A headless agent holds one 7-day access token and no refresh token. Its
connection is the claim it completed, and it lasts until that token expires;
the connections pages list it beside the OAuth connections.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from django.contrib.auth.models import User
from django.utils import timezone

from agent_auth.models import Claim, ClaimStatus
from agent_auth.services import HEADLESS_CLIENT_ID, HEADLESS_SCOPES
from operator_core.conf import operator_settings
from organizations.models import Organization

HEADLESS_CLIENT_NAME = "Headless agent"


@dataclass(frozen=True)
class HeadlessConnection:
    person: User
    organization: Organization
    scopes: list[str]
    authorized_at: datetime
    expires_at: datetime
    client_id: str = HEADLESS_CLIENT_ID
    client_name: str = HEADLESS_CLIENT_NAME


def headless_connections(
    *, person_id: int | None = None, organization_id: uuid.UUID | None = None
) -> list[HeadlessConnection]:
    """Completed claims whose token has not expired, newest first."""
    lifetime = timedelta(seconds=operator_settings().headless_token_lifetime_seconds)
    claims = (
        Claim.objects.filter(
            status=ClaimStatus.COMPLETED,
            completed_at__gt=timezone.now() - lifetime,
            user__isnull=False,
            organization__isnull=False,
        )
        .select_related("user", "organization")
        .order_by("-completed_at", "-id")
    )
    if person_id is not None:
        claims = claims.filter(user_id=person_id)
    if organization_id is not None:
        claims = claims.filter(organization_id=organization_id)
    # The filter admits only claims with a person, an organization and a completion time.
    return [
        HeadlessConnection(
            person=cast(User, claim.user),
            organization=cast(Organization, claim.organization),
            scopes=list(HEADLESS_SCOPES),
            authorized_at=cast(datetime, claim.completed_at),
            expires_at=cast(datetime, claim.completed_at) + lifetime,
        )
        for claim in claims
    ]
