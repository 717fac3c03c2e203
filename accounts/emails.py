"""The one normal form of an email: a person's identity, and the key every email limit counts under.

NFKC, trimmed, then the whole address lower-cased (local part included), so
`Bob@Acme.test`, ` bob@acme.test` and a full-width spelling are one person.
Why the whole address: docs/development/decisions.md#one-identity-the-email.

And the one folded form of an email domain (`folded_domain`, `email_domain`):
how identity providers store the domains they serve, and how sign-in and
password reset look an email's domain up among them.
"""

import unicodedata

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.db.models.functions import Lower
from django.utils.encoding import punycode

# Django's `User.username` holds at most 150 characters, and the username is the email.
EMAIL_MAX_LENGTH = 150


def normalized_email(email: str) -> str:
    """`email` as it is stored and compared: NFKC, stripped, lower-cased."""
    return unicodedata.normalize("NFKC", email).strip().lower()


def folded_domain(domain: str) -> str:
    """`domain` trimmed, lower-cased and in ASCII (IDNA, RFC 3490): `Bücher.Example` is `xn--bcher-kva.example`.

    Raises UnicodeError for a domain IDNA refuses (an empty or over-long label).
    """
    return punycode(domain.strip().lower()).lower()


def email_domain(email: str) -> str:
    """The folded domain of `email`; for one IDNA refuses, its lower-case text, which no stored domain equals."""
    domain = email.rpartition("@")[2].strip().lower()
    try:
        return folded_domain(domain)
    except UnicodeError:
        return domain


def people_with_email(email: str) -> QuerySet[User]:
    """The account whose email is `email` in any case or spelling (at most one: the unique index on LOWER(email))."""
    normal = normalized_email(email)
    if not normal:
        return get_user_model().objects.none()
    # LOWER(email) is what the unique index covers (accounts/migrations/0001_email_is_the_identity.py).
    return get_user_model().objects.alias(email_lower=Lower("email")).filter(email_lower=normal)


def person_for_email_or_none(email: str) -> User | None:
    """The account of `email`, active or not, or None."""
    return people_with_email(email).first()
