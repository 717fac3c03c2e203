"""Reads of the headless path: who an email belongs to, which claim a token names."""

import hashlib
import uuid

from django.contrib.auth.models import User

from accounts.emails import people_with_email
from agent_auth.errors import ClaimEnded
from agent_auth.models import Claim
from operator_core.conf import operator_settings


def claim_token_hash(claim_token: str) -> str:
    """SHA-256 of a claim token: what the database keeps instead of the token."""
    return hashlib.sha256(claim_token.encode()).hexdigest()


def active_user_for_email_or_none(email: str) -> User | None:
    """The active account of this email, in any case or spelling (accounts.emails)."""
    return people_with_email(email).filter(is_active=True).first()


def locked_claim_for_token_or_none(claim_token: str) -> Claim | None:
    """The claim named by this token, row-locked for the caller's transaction (PostgreSQL)."""
    return (
        Claim.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(token_hash=claim_token_hash(claim_token))
        .first()
    )


def claim_id_for_token_or_none(claim_token: str) -> uuid.UUID | None:
    """The id of the claim this token names now, or None."""
    return Claim.objects.filter(token_hash=claim_token_hash(claim_token)).values_list("pk", flat=True).first()


def require_attempts_left(*, claim_id: uuid.UUID | None) -> None:
    """Raise `ClaimEnded` when the claim has used all its attempts: nothing is replayed for it any more."""
    if claim_id is None:
        return
    attempts = Claim.objects.filter(pk=claim_id).values_list("attempts", flat=True).first()
    if attempts is not None and attempts >= operator_settings().headless_claim_attempts:
        raise ClaimEnded("Too many wrong codes; start again at /api/agent/auth.")
