"""Writes of the headless path: start a claim, complete it (docs/headless.md).

A claim is started with an email and completed with its claim token and the
six-digit code sent to that email. Services raise `OperatorError` subclasses and
know nothing of HTTP; idempotency and per-IP limits are applied around them by
the views. A claim started, completed, or ended by its last wrong code is
written to the audit trail in the same transaction (never the email, the claim
token or the code).

A repeated start (the same `Idempotency-Key` and body) gets a new token for
the same claim and no second email (`reissue_claim_token`); the earlier token
stops working. A completion under a key already used with another body is a
guess at the code and costs an attempt like a wrong one
(`count_conflicting_completion`).
"""

import logging
import math
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from agent_auth.errors import (
    ClaimEnded,
    ClaimExpired,
    ClaimUsed,
    HeadlessErrorCode,
    InvalidClaim,
    InvalidCode,
    InvalidOrganization,
    OrganizationRequired,
)
from agent_auth.models import Claim, ClaimStatus
from agent_auth.outbox import queue_verification_email
from agent_auth.recipient_limit import count_verification_email
from agent_auth.selectors import active_user_for_email_or_none, claim_token_hash, locked_claim_for_token_or_none
from audit.models import AuditAction
from audit.services import SUPPRESSED_EMAIL_DETAIL, record_event
from oauth.tokens import issue_access_token
from operator_core.conf import operator_settings
from operator_core.errors import Forbidden, OperatorError
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE
from organizations.errors import IneligibleOrganization, NoEligibleOrganization, OrganizationChoiceRequired
from organizations.models import Organization
from organizations.payloads import organization_summary
from organizations.selectors import require_eligible_organization

logger = logging.getLogger(__name__)

HEADLESS_CLIENT_ID = "headless-agent"
HEADLESS_SCOPES = (SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE)
_CODE_HMAC_SALT = "agent_auth.claim_code"


@dataclass(frozen=True)
class StartedClaim:
    claim_id: uuid.UUID
    claim_token: str
    expires_in: int


@dataclass(frozen=True)
class CompletedClaim:
    access_token: str
    expires_in: int
    scopes: tuple[str, ...]
    organization: Organization


def _code_hash(*, binding: str, code: str) -> str:
    # Keyed with SECRET_KEY and bound to the claim (its first token's hash): a leaked database
    # alone cannot be brute-forced over the 10^6 codes, and a hash cannot be moved to another claim.
    return salted_hmac(_CODE_HMAC_SALT, f"{binding}:{code}", algorithm="sha256").hexdigest()


@transaction.atomic
def start_claim(*, email: str) -> StartedClaim:
    """Create a claim for `email` and queue the email of its six-digit code, in one transaction.

    An unknown or inactive email gets a claim too (with no user and a code hash
    no code can match), the same work and the same answer, but no email: the
    caller cannot tell whether an account exists (no account enumeration). The
    token is returned once and never stored; the code is stored only sealed,
    until its email is sent (agent_auth.outbox).

    Past the hourly emails of its recipient (`agent_auth.recipient_limit`,
    counted for unknown emails alike), the claim is made and answered the same,
    but no email is queued and no code can match; the audit trail records the
    suppressed email.
    """
    conf = operator_settings()
    user: User | None = active_user_for_email_or_none(email)
    email_allowed = count_verification_email(email, user=user)
    claim_token = secrets.token_urlsafe(32)
    token_hash = claim_token_hash(claim_token)
    code = f"{secrets.randbelow(10**6):06d}"
    # Unknown email, or no email sent: hash a value that is never six digits, so no code ever matches.
    hashed = code if user is not None and email_allowed else f"x{secrets.token_hex(8)}"
    claim = Claim.objects.create(
        token_hash=token_hash,
        user=user,
        code_hash=_code_hash(binding=token_hash, code=hashed),
        code_binding=token_hash,
        expires_at=timezone.now() + timedelta(seconds=conf.headless_code_lifetime_seconds),
    )
    if email_allowed:
        # Into the outbox with the claim, for a known and an unknown email alike (the same work);
        # the email worker sends it after commit, never this request (agent_auth.outbox).
        queue_verification_email(claim=claim, code=code)
    else:
        logger.warning("agent_auth: a verification email was suppressed: its recipient reached the hourly limit")
    # Recorded for an unknown email too (no person): the same work either way. Kept only a
    # day without a person or with its email suppressed (audit.services.purge_audit_events).
    record_event(
        AuditAction.CLAIM_START,
        person_id=user.pk if user else None,
        client_id=HEADLESS_CLIENT_ID,
        detail=None if email_allowed else SUPPRESSED_EMAIL_DETAIL,
    )
    return StartedClaim(claim_id=claim.pk, claim_token=claim_token, expires_in=conf.headless_code_lifetime_seconds)


@transaction.atomic
def reissue_claim_token(*, claim_id: uuid.UUID) -> StartedClaim:
    """Give the claim a new token and return it: the answer to a repeated start, with no second email.

    The earlier token stops working (`invalid_claim`); the code already emailed
    stays valid, and so do the claim's expiry, attempts and state. Whoever
    repeats the start gets a token, never the one the first caller got.
    """
    claim = Claim.objects.select_for_update().get(pk=claim_id)
    claim_token = secrets.token_urlsafe(32)
    claim.token_hash = claim_token_hash(claim_token)
    claim.save(update_fields=["token_hash"])
    seconds_left = (claim.expires_at - timezone.now()).total_seconds()
    return StartedClaim(claim_id=claim.pk, claim_token=claim_token, expires_in=max(math.ceil(seconds_left), 0))


def _require_pending(claim: Claim) -> None:
    if claim.status == ClaimStatus.COMPLETED:
        raise ClaimUsed("This claim has already been used; start again at /api/agent/auth.")
    if claim.status == ClaimStatus.ENDED:
        raise ClaimEnded("Too many wrong codes; start again at /api/agent/auth.")
    if claim.expires_at <= timezone.now():
        raise ClaimExpired("This claim has expired; start again at /api/agent/auth.")


def _count_wrong_attempt(claim: Claim) -> int:
    """Count one wrong attempt on a locked claim, ending it at the last; return the attempts left."""
    allowed = operator_settings().headless_claim_attempts
    claim.attempts += 1
    # Only a pending claim ends: a completed one stays a connection (agent_auth.connections).
    ended = claim.status == ClaimStatus.PENDING and claim.attempts >= allowed
    if ended:
        claim.status = ClaimStatus.ENDED
    claim.save(update_fields=["attempts", "status"])
    if ended:
        record_event(
            AuditAction.CLAIM_END,
            outcome=HeadlessErrorCode.INVALID_CODE,
            person_id=claim.user_id,
            client_id=HEADLESS_CLIENT_ID,
            detail={"attempts": claim.attempts},
        )
    return max(allowed - claim.attempts, 0)


def _record_wrong_code(claim: Claim) -> InvalidCode:
    remaining = _count_wrong_attempt(claim)
    if remaining == 0:
        return InvalidCode("Wrong code. No attempts remain; start again at /api/agent/auth.", attempts_remaining=0)
    return InvalidCode("Wrong code.", attempts_remaining=remaining)


@transaction.atomic
def count_conflicting_completion(*, claim_id: uuid.UUID | None) -> None:
    """Count a completion whose key was used with another body as a wrong attempt on `claim_id`.

    Another body under the same key is another code: without this count, the
    answer (422, or the stored answer for the right code) would let codes be
    tried for free. Counted whatever the claim's state; a pending claim ends at
    its last attempt. No claim (the token named none) has nothing to guess.
    """
    claim = Claim.objects.select_for_update().filter(pk=claim_id).first() if claim_id else None
    if claim is not None:
        _count_wrong_attempt(claim)


def _chosen_organization(user: User, organization_id: str | None) -> Organization:
    # The rule is shared with the consent page; only the wording and the codes are the headless path's.
    try:
        return require_eligible_organization(user, organization_id=organization_id)
    except NoEligibleOrganization:
        raise Forbidden("This person is not an admin or member of any organization.") from None
    except IneligibleOrganization as error:
        raise InvalidOrganization(
            "organization_id is not an organization where this person is admin or member.",
            field="organization_id",
            organizations=[organization_summary(organization) for organization in error.eligible],
        ) from None
    except OrganizationChoiceRequired as error:
        raise OrganizationRequired(
            "This person belongs to several organizations; retry with organization_id "
            "(and a new Idempotency-Key, if you send one).",
            organizations=[organization_summary(organization) for organization in error.eligible],
        ) from None


def complete_claim(*, claim_token: str, code: str, organization_id: str | None = None) -> CompletedClaim:
    """Exchange a claim token and its code for a 7-day access token bound to one organization.

    Order, so that nothing about the person leaks before the code is proven:
    unknown token (`invalid_claim`); used, ended or expired claim (`claim_used`,
    `claim_ended`, `claim_expired`); wrong code (`invalid_code`, counted; the
    fifth ends the claim); then the organizations: none eligible (`forbidden`),
    a choice that is not eligible (`invalid_organization`), several and no
    choice (`organization_required`). Only a wrong code changes the claim
    before success; the others leave it usable. There is no refresh token.
    """
    conf = operator_settings()
    failure: OperatorError | None = None
    with transaction.atomic():
        claim = locked_claim_for_token_or_none(claim_token)
        if claim is None:
            raise InvalidClaim("Unknown claim token; start at /api/agent/auth.")
        _require_pending(claim)
        matches = constant_time_compare(_code_hash(binding=claim.code_binding, code=code), claim.code_hash)
        if claim.user is None or not matches:
            # Committed before raising: the count must survive the error.
            failure = _record_wrong_code(claim)
        else:
            if not claim.user.is_active:
                raise Forbidden("This account is inactive.")
            organization = _chosen_organization(claim.user, organization_id)
            claim.status = ClaimStatus.COMPLETED
            claim.completed_at = timezone.now()
            claim.organization = organization
            claim.save(update_fields=["status", "completed_at", "organization"])
            access_token = issue_access_token(
                user_id=claim.user.pk,
                organization_id=str(organization.id),
                client_id=HEADLESS_CLIENT_ID,
                scopes=list(HEADLESS_SCOPES),
                expires_in=conf.headless_token_lifetime_seconds,
            )
            record_event(
                AuditAction.CLAIM_COMPLETION,
                person_id=claim.user.pk,
                organization_id=organization.pk,
                client_id=HEADLESS_CLIENT_ID,
                detail={"scopes": list(HEADLESS_SCOPES)},
            )
    if failure is not None:
        raise failure
    return CompletedClaim(
        access_token=access_token,
        expires_in=conf.headless_token_lifetime_seconds,
        scopes=HEADLESS_SCOPES,
        organization=organization,
    )


# An ended or expired claim is kept this long after it expires, for support questions.
CLAIM_RETENTION_AFTER_EXPIRY = timedelta(days=1)


def purge_expired_claims(*, now: datetime) -> int:
    """Delete claims that expired more than a day before `now`; return how many went.

    A completed claim is a connection, listed on the connections pages, until its token
    expires (agent_auth.connections), so it is kept until a day after that instead.
    """
    token_lifetime = timedelta(seconds=operator_settings().headless_token_lifetime_seconds)
    cutoff = now - CLAIM_RETENTION_AFTER_EXPIRY
    expired = Claim.objects.filter(expires_at__lt=cutoff).filter(
        ~Q(status=ClaimStatus.COMPLETED) | Q(completed_at__lt=cutoff - token_lifetime)
    )
    deleted, _ = expired.delete()
    return deleted
