"""Who administers an organization: the reads behind the pages its admins use.

The role is read from the database on every call, as the operator endpoint
does (docs/managing-connections.md#who-can-see-what). Someone with no role in
the organization is told it does not exist (`NotFound`), so the page reveals
nothing of an organization to anyone outside it; someone with a role other
than admin is told they may not (`Forbidden`).
"""

from django.contrib.auth.models import User
from django.db.models import QuerySet

from operator_core.errors import Forbidden, NotFound
from organizations.models import Membership, Organization, Role


def organization_administered_by(user: User, *, slug: str) -> Organization:
    """The organization `slug` when `user` is its admin; `NotFound` without a role there, else `Forbidden`."""
    membership = (
        Membership.objects.filter(user_id=user.pk, organization__slug=slug).select_related("organization").first()
    )
    if membership is None:
        raise NotFound("There is no such organization.")
    if membership.role != Role.ADMIN:
        raise Forbidden("Only the organization's admins can see its connections and usage.")
    return membership.organization


def administered_organizations(user: User) -> QuerySet[Organization]:
    """The organizations `user` is admin of, by name."""
    return Organization.objects.filter(memberships__user_id=user.pk, memberships__role=Role.ADMIN).order_by("name")
