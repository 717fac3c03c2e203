"""Reads of organizations, memberships and eligibility (docs/development/code-style.md#layout).

An id that is malformed or missing reads as None; `DoesNotExist` never leaves
this module. The knowledge base's reads are knowledge/selectors.py.
"""

import uuid
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.auth.models import User
from django.db.models import QuerySet

from operator_core.ids import uuid_or_none
from organizations.errors import IneligibleOrganization, NoEligibleOrganization, OrganizationChoiceRequired
from organizations.models import OPERATOR_ROLES, Membership, Organization


def organization_by_id_or_none(organization_id: str | uuid.UUID) -> Organization | None:
    """The organization with this id; None when missing or not a UUID."""
    parsed = uuid_or_none(organization_id)
    if parsed is None:
        return None
    return Organization.objects.filter(id=parsed).first()


def organization_by_slug_or_none(slug: str) -> Organization | None:
    if not isinstance(slug, str) or not slug:
        return None
    return Organization.objects.filter(slug=slug).first()


def eligible_organizations(user: User) -> QuerySet[Organization]:
    """Organizations where `user` is admin or member (docs/data-model.md#people-and-roles), by name then id."""
    if user is None or not getattr(user, "pk", None):
        return Organization.objects.none()
    return Organization.objects.filter(memberships__user_id=user.pk, memberships__role__in=OPERATOR_ROLES).order_by(
        "name", "id"
    )


def require_eligible_organization(user: User, *, organization_id: str | None) -> Organization:
    """The organization `user` may connect to: the one chosen, or the only eligible one.

    With no choice (None or empty) and exactly one eligible organization, that
    one is used. Raises NoEligibleOrganization when the person is admin or
    member nowhere, OrganizationChoiceRequired when several are eligible and
    none was chosen, and IneligibleOrganization when the choice is not one of
    them (a forged or stale id). All three are `Forbidden`.
    """
    organizations = list(eligible_organizations(user))
    if not organizations:
        raise NoEligibleOrganization("You are not an admin or member of any organization.")
    if not organization_id:
        if len(organizations) == 1:
            return organizations[0]
        raise OrganizationChoiceRequired("Choose an organization to connect.", eligible=organizations)
    for organization in organizations:
        if str(organization.pk) == str(organization_id):
            return organization
    raise IneligibleOrganization("That organization is not available to you.", eligible=organizations)


def holds_operator_role(*, user_id: int, organization_id: uuid.UUID | str) -> bool:
    """True when the active person is admin or member of the organization right now (re-read, never cached)."""
    return Membership.objects.filter(
        user_id=user_id, organization_id=organization_id, role__in=OPERATOR_ROLES, user__is_active=True
    ).exists()


def membership_or_none(*, user_id: int, organization_id: str | uuid.UUID) -> Membership | None:
    """The membership of `user_id` in the organization whatever its role, or None."""
    parsed = uuid_or_none(organization_id)
    if parsed is None:
        return None
    return Membership.objects.select_related("organization").filter(user_id=user_id, organization_id=parsed).first()


def display_zone(organization: Organization) -> ZoneInfo:
    """The organization's display time zone; UTC for a name this machine does not know.

    The admin form refuses such a name (`validate_time_zone`); one written around
    it, or dropped by a tzdata update, must not break the pages.
    """
    try:
        return ZoneInfo(organization.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def organization_time_zones() -> dict[uuid.UUID, str]:
    """{organization id: the name of its display time zone (`display_zone`)}, for every organization."""
    return {
        organization.pk: str(display_zone(organization).key)
        for organization in Organization.objects.only("id", "time_zone")
    }


def roles_of_person(person_id: int) -> dict[uuid.UUID, str]:
    """{organization id: role} of every membership the person holds."""
    return dict(Membership.objects.filter(user_id=person_id).values_list("organization_id", "role"))


def roles_in_organization(organization_id: uuid.UUID) -> dict[int, str]:
    """{person id: role} of every member of the organization."""
    return dict(Membership.objects.filter(organization_id=organization_id).values_list("user_id", "role"))


def organizations_by_id(organization_ids: set[uuid.UUID]) -> dict[uuid.UUID, Organization]:
    """The organizations among `organization_ids` that exist, by id."""
    return Organization.objects.in_bulk(list(organization_ids)) if organization_ids else {}


def emails_of_people(person_ids: set[int]) -> dict[int, str]:
    """{person id: email} of the people among `person_ids` that exist."""
    if not person_ids:
        return {}
    return dict(User.objects.filter(pk__in=person_ids).values_list("pk", "email"))
