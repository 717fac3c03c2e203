"""Writes of the authorization server beyond what DOT stores itself.

- the sign-in rate limit (counters in Django's cache, shared by every worker
  when REDIS_URL is set);
- the purge of registered clients never used (registration itself:
  oauth/registration.py);
- the ledger of exchanged authorization codes, so that a replayed code revokes
  every token it issued (OAuth 2.1 §4.1.3);
- the check of a client secret against its stored digest (oauth/client_secrets.py).
"""

import hashlib
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from accounts.emails import normalized_email
from oauth.audit_trail import record_code_replay
from oauth.client_secrets import client_secret_digest, digest_matches, is_client_secret_digest, is_password_hash
from oauth.models import Application, ClientPolicy, RedeemedCode, code_digest
from operator_core.conf import operator_settings
from operator_core.errors import RateLimited
from operator_core.rate_limits import FixedWindowLimiter, OnOutage
from operator_core.telemetry import metrics

SIGN_IN_RATE_GROUP = "oauth.sign-in"
SIGN_IN_WINDOW_SECONDS = 60


def sign_in_email_key(email: str) -> str:
    """The rate-limit key of an email: digest of its normal form (accounts.emails): no address in the cache."""
    return hashlib.sha256(normalized_email(email).encode("utf-8")).hexdigest()


def count_sign_in_attempt(*, client_address: str, email: str) -> None:
    """Count one sign-in attempt against the client address and the email; raise RateLimited past the limit.

    Raises `TemporarilyUnavailable` while Redis does not answer (docs/operations.md#outages).

    Both counters always advance, so hammering one account from many addresses,
    or many accounts from one address, is limited either way (docs/development/decisions.md#limits).
    The email is hashed into the cache key: no address is stored in clear.
    """
    limit = operator_settings().sign_in_attempts_per_minute
    # Fails closed while Redis is away: per-process counts would multiply the guesses allowed
    # by the number of workers, exactly when an attacker may have caused the outage.
    per_ip = FixedWindowLimiter(
        group=f"{SIGN_IN_RATE_GROUP}.ip", limit=limit, period_seconds=SIGN_IN_WINDOW_SECONDS, on_outage=OnOutage.REFUSE
    )
    per_email = FixedWindowLimiter(
        group=f"{SIGN_IN_RATE_GROUP}.email",
        limit=limit,
        period_seconds=SIGN_IN_WINDOW_SECONDS,
        on_outage=OnOutage.REFUSE,
    )
    counts = [per_ip.count(client_address), per_email.count(sign_in_email_key(email))]
    waits = [counted.retry_after_seconds for counted in counts if counted.exceeded]
    if waits:
        metrics.count_limit_refusal(SIGN_IN_RATE_GROUP)
        raise RateLimited("Too many sign-in attempts. Wait a minute and try again.", retry_after_seconds=max(waits))


def record_redeemed_code(
    *, code: str, application: Application, token_family: uuid.UUID | None, access_token_id: int | None
) -> RedeemedCode:
    """Remember an exchanged code until the tokens it issued could no longer be refreshed."""
    lifetime = operator_settings().refresh_token_lifetime_seconds
    return RedeemedCode.objects.create(
        code_checksum=code_digest(code),
        application=application,
        token_family=token_family,
        access_token_id=access_token_id,
        expires=timezone.now() + timedelta(seconds=lifetime),
    )


@transaction.atomic
def revoke_tokens_of_replayed_code(*, code: str, application: Application) -> bool:
    """Revoke every token issued from `code` if it was already exchanged; True when it was.

    Refresh tokens of the family (including later rotations) are revoked and
    their access-token rows deleted. Already-issued JWTs stay cryptographically
    valid until they expire (at most one hour, docs/authentication.md#revocation).
    """
    redeemed = RedeemedCode.objects.filter(code_checksum=code_digest(code), application=application).first()
    if redeemed is None:
        return False
    if redeemed.token_family:
        get_refresh_token_model().revoke_family(redeemed.token_family)
    if redeemed.access_token_id:
        get_access_token_model().objects.filter(pk=redeemed.access_token_id).delete()
    record_code_replay(application=application, token_family=redeemed.token_family)
    return True


def verify_client_secret(*, presented: str, stored: str) -> bool:
    """Whether `presented` is the client secret stored as `stored`; constant time for a digest.

    A secret still stored under an older scheme (a Django password hash, as DOT
    stored them, or a digest under a key now in `SECRET_KEY_FALLBACKS`) is moved
    to the current digest on its first successful check: the slow check is paid
    once per client, never again. A secret stored in clear (DOT's
    `hash_client_secret=False`) is compared as DOT does.
    """
    if is_client_secret_digest(stored):
        if digest_matches(presented, stored):
            return True
        for old_key in settings.SECRET_KEY_FALLBACKS:
            if digest_matches(presented, stored, key=old_key):
                _store_current_digest(stored=stored, secret=presented)
                return True
        return False
    if is_password_hash(stored):
        if not check_password(presented, stored):
            return False
        _store_current_digest(stored=stored, secret=presented)
        return True
    return constant_time_compare(presented, stored)


def _store_current_digest(*, stored: str, secret: str) -> None:
    # Found by the old stored value: a salted password hash names one client, and
    # another row with the same value would hold the same secret anyway.
    Application.objects.filter(client_secret=stored).update(client_secret=client_secret_digest(secret))


def purge_unused_clients(*, now: datetime) -> int:
    """Delete clients that anyone could add and that never obtained a token within the retention; return how many.

    The retention is `OPERATOR["unused_client_retention_hours"]` (24): a client
    registers, or has its Client ID Metadata Document fetched, right before its
    first authorization, and both are open to anyone before any sign-in, so
    unused clients are what a stranger can pile up (docs/limits.md#registered-clients).
    A metadata-document client that comes back is fetched again. Kept: a client
    that ever obtained a token, one created by staff, and one an organization's
    client policy lists (deleting it would silently take it off the list). A
    client that got as far as a grant but never exchanged it goes too, with its grant.
    """
    cutoff = now - timedelta(hours=operator_settings().unused_client_retention_hours)
    listed = ClientPolicy.applications.through.objects.values("application_id")
    unused = Application.objects.filter(
        registration_source__in=(Application.RegistrationSource.DCR, Application.RegistrationSource.CIMD),
        last_used_at__isnull=True,
        created__lt=cutoff,
    ).exclude(pk__in=listed)
    _, deleted_by_model = unused.delete()
    return deleted_by_model.get(Application._meta.label, 0)


def purge_redeemed_codes(*, now: datetime) -> int:
    """Forget exchanged codes whose tokens can no longer be refreshed; return how many went."""
    deleted, _ = RedeemedCode.objects.filter(expires__lt=now).delete()
    return deleted
