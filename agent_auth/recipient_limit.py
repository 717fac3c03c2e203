"""At most `OPERATOR["headless_emails_per_recipient_per_hour"]` verification emails per recipient (docs/limits.md).

Every start counts, from any address and whether or not an account has that
email, so the count reveals nothing about which accounts exist. A start that
matched an account counts under that account; one that matched none under its
normal form (accounts.emails). The key is an HMAC under SECRET_KEY, so the cache never holds
an address. A start past the limit is answered as any other (202); only its
email is not sent. Why: docs/development/decisions.md#headless-path.
"""

from django.contrib.auth.models import User
from django.utils.crypto import salted_hmac

from accounts.emails import normalized_email
from operator_core.conf import operator_settings
from operator_core.rate_limits import FixedWindowLimiter, OnOutage

RECIPIENT_GROUP = "agent_auth.recipient"
_KEY_SALT = "agent_auth.recipient"


def _recipient(email: str, user: User | None) -> str:
    if user is not None:
        return f"account:{user.pk}"
    return f"email:{normalized_email(email)}"


def count_verification_email(email: str, *, user: User | None) -> bool:
    """Count one verification email for `email` (matched to `user`, if any); False once over the hourly limit.

    Raises `TemporarilyUnavailable` when Redis does not answer: the limit guards inboxes.
    """
    limiter = FixedWindowLimiter(
        group=RECIPIENT_GROUP,
        limit=operator_settings().headless_emails_per_recipient_per_hour,
        period_seconds=3600,
        on_outage=OnOutage.REFUSE,
    )
    recipient = salted_hmac(_KEY_SALT, _recipient(email, user), algorithm="sha256").hexdigest()
    return not limiter.count(recipient).exceeded
