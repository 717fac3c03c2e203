"""At most `OPERATOR["headless_emails_per_recipient_per_hour"]` verification emails per recipient (docs/limits.md).

The per-IP limit alone lets one address send 60 codes an hour to the same
person, and many addresses many more. This count keys on the email asked for,
lower-cased (emails are matched without regard to case), so every start for
one recipient counts, from any address, whether or not an account has that
email: the count and its effect reveal nothing about which accounts exist.
The key is an HMAC of the address under SECRET_KEY, so the cache (Redis) never
holds an address. A start past the limit is answered as any other (202); only
its email is not sent.
"""

from django.utils.crypto import salted_hmac

from operator_core.conf import operator_settings
from operator_core.rate_limits import FixedWindowLimiter, OnOutage

RECIPIENT_GROUP = "agent_auth.recipient"
_KEY_SALT = "agent_auth.recipient"


def count_verification_email(email: str) -> bool:
    """Count one verification email for `email`; False once its recipient is over the hourly limit.

    Raises `TemporarilyUnavailable` when Redis does not answer: the limit guards inboxes.
    """
    limiter = FixedWindowLimiter(
        group=RECIPIENT_GROUP,
        limit=operator_settings().headless_emails_per_recipient_per_hour,
        period_seconds=3600,
        on_outage=OnOutage.REFUSE,
    )
    recipient = salted_hmac(_KEY_SALT, email.lower(), algorithm="sha256").hexdigest()
    return not limiter.count(recipient).exceeded
