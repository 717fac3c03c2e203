"""Reads of the headless path: who an email belongs to, which claim a token names."""

import hashlib

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from agent_auth.models import Claim


def claim_token_hash(claim_token: str) -> str:
    """SHA-256 of a claim token: what the database keeps instead of the token."""
    return hashlib.sha256(claim_token.encode()).hexdigest()


def active_user_for_email_or_none(email: str) -> AbstractBaseUser | None:
    """The active user with this email (case-insensitive); the oldest account if several share it."""
    return get_user_model().objects.filter(email__iexact=email, is_active=True).order_by("pk").first()


def locked_claim_for_token_or_none(claim_token: str) -> Claim | None:
    """The claim named by this token, row-locked for the caller's transaction (PostgreSQL)."""
    return (
        Claim.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(token_hash=claim_token_hash(claim_token))
        .first()
    )
