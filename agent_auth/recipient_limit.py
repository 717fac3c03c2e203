"""At most `OPERATOR["headless_emails_per_recipient_per_hour"]` verification emails per recipient (docs/limits.md).

The per-IP limit alone lets one address send 60 codes an hour to the same
person, and many addresses many more. This count keys on the recipient, so
every start for one recipient counts, from any address, whether or not an
account has that email: the count and its effect reveal nothing about which
accounts exist.

A start that matched an account is counted under that account, since its
email goes to the account's stored address whatever spelling matched it: the
database's case-insensitive match is not Python's (PostgreSQL's `UPPER` maps
`ı` to `I` and `ſ` to `S`), so a key on the typed spelling let look-alike
spellings each have the full count for one inbox. A start that matched none is
counted under its NFKC case-fold (`ſ` is `s` there too).

The key is an HMAC under SECRET_KEY, so the cache (Redis) never holds an
address. A start past the limit is answered as any other (202); only its email
is not sent.
"""

import unicodedata

from django.contrib.auth.models import User
from django.utils.crypto import salted_hmac

from operator_core.conf import operator_settings
from operator_core.rate_limits import FixedWindowLimiter, OnOutage

RECIPIENT_GROUP = "agent_auth.recipient"
_KEY_SALT = "agent_auth.recipient"


def _recipient(email: str, user: User | None) -> str:
    if user is not None:
        return f"account:{user.pk}"
    return f"email:{unicodedata.normalize('NFKC', email).casefold()}"


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
