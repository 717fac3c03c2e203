"""Create whatever part of the demo people, organizations and roles is missing, leaving the rest alone."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from organizations.demo.accounts import DEMO_PASSWORD, ORGANIZATIONS, PEOPLE, STAFF_EMAIL
from organizations.models import Membership, Organization, Role
from organizations.selectors import membership_or_none, organization_by_slug_or_none
from organizations.services import add_membership, create_organization, record_role_change


@dataclass(frozen=True)
class DemoAccounts:
    people: dict[str, User]  # by email
    organizations: dict[str, Organization]  # by slug


@transaction.atomic
def seed_demo_accounts() -> DemoAccounts:
    """The demo people and organizations, each person with the demo role in each of theirs."""
    people = {email: _person(email) for email in PEOPLE}
    staff = people[STAFF_EMAIL]
    organizations = {slug: _organization(slug, name) for slug, name in ORGANIZATIONS}
    for email, roles in PEOPLE.items():
        for slug, role in roles.items():
            _membership(people[email], organizations[slug], role, changed_by=staff)
    return DemoAccounts(people=people, organizations=organizations)


def _person(email: str) -> User:
    user_model = get_user_model()
    user = user_model.objects.filter(username=email).first()
    if user is not None:
        return user
    if email == STAFF_EMAIL:
        return user_model.objects.create_superuser(username=email, email=email, password=DEMO_PASSWORD)
    return user_model.objects.create_user(username=email, email=email, password=DEMO_PASSWORD)


def _organization(slug: str, name: str) -> Organization:
    return organization_by_slug_or_none(slug) or create_organization(slug=slug, name=name)


def _membership(user: User, organization: Organization, role: Role, *, changed_by: User) -> Membership:
    membership = membership_or_none(user_id=user.pk, organization_id=organization.id)
    if membership is None:
        return add_membership(user=user, organization=organization, role=role)
    return record_role_change(membership=membership, role=role, changed_by=changed_by)
