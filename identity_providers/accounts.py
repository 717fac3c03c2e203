"""Which account a provider's verified person is: the `(issuer, subject)` link rules.

- A link names the account; the token's email must still be that account's email,
  else the sign-in is refused (`email_changed`): nothing is updated silently.
- No link yet: the account of that email (any case) is linked, unless it is already
  linked to another subject of this issuer (`subject_changed`: the provider gave the
  email to someone else).
- No account: created, with a `requester` membership in the provider's organization,
  only when the provider has `create_requesters`; else refused (`no_account`).
No provider grants `admin` or `member` (docs/development/decisions.md#single-sign-on).
An ID-JAG (identity_providers/id_jag.py) goes through the same rules, except that it
links by email only when the provider says so, may carry no email once linked,
and never creates an account (`person_for_id_jag`).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from accounts.emails import normalized_email, person_for_email_or_none
from audit.models import AuditAction
from audit.services import record_event
from identity_providers.errors import ProviderSignInRefused, Refusal
from identity_providers.models import IdentityLink, IdentityProvider
from organizations.models import Role
from organizations.services import add_membership


@transaction.atomic
def person_for_identity(
    provider: IdentityProvider, *, subject: str, email: str, link_by_email: bool = True, may_create: bool = True
) -> User:
    """The account that `subject`, with the verified `email`, signs in as; `ProviderSignInRefused` if none may.

    `email` may be empty only when `link_by_email` is False: then a link alone names the account.
    """
    link = IdentityLink.objects.select_related("user").filter(issuer=provider.issuer, subject=subject).first()
    if link is not None:
        person = link.user
        if email and normalized_email(person.email) != normalized_email(email):
            raise ProviderSignInRefused(Refusal.EMAIL_CHANGED, person_id=person.pk)
        _require_active(person)
        link.last_signed_in_at = timezone.now()
        link.save(update_fields=["last_signed_in_at"])
        return person
    if not link_by_email or not email:
        raise ProviderSignInRefused(Refusal.NOT_LINKED)
    account = person_for_email_or_none(email)
    if account is None:
        if not (may_create and provider.create_requesters):
            raise ProviderSignInRefused(Refusal.NO_ACCOUNT)
        account = _create_requester(provider, email=email)
    elif IdentityLink.objects.filter(user=account, issuer=provider.issuer).exists():
        raise ProviderSignInRefused(Refusal.SUBJECT_CHANGED, person_id=account.pk)
    _require_active(account)
    IdentityLink.objects.create(user=account, issuer=provider.issuer, subject=subject, last_signed_in_at=timezone.now())
    record_event(
        AuditAction.IDENTITY_LINK,
        person_id=account.pk,
        organization_id=provider.organization_id,
        detail={"issuer": provider.issuer},
    )
    return account


def _create_requester(provider: IdentityProvider, *, email: str) -> User:
    normalised = normalized_email(email)
    # No password: such a person signs in through the provider only.
    person = get_user_model().objects.create_user(username=normalised, email=normalised, password=None)
    add_membership(user=person, organization=provider.organization, role=Role.REQUESTER)
    return person


def _require_active(person: User) -> None:
    if not person.is_active:
        raise ProviderSignInRefused(Refusal.ACCOUNT_INACTIVE, person_id=person.pk)
