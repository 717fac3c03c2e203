"""Writes of organizations and memberships (docs/development/code-style.md#layout).

Each function is one business operation and is atomic. Every change of a
person's role in an organization (given, changed, taken away) is written to the
audit trail in its transaction. The knowledge base's writes are knowledge/services.py.
"""

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import User
from django.db import transaction

from audit.models import AuditAction
from audit.services import record_event
from operator_core.errors import Conflict, InvalidArguments
from organizations.models import Membership, Organization, Role


def create_organization(*, slug: str, name: str) -> Organization:
    if Organization.objects.filter(slug=slug).exists():
        raise Conflict("An organization with this slug already exists.", field="slug")
    return Organization.objects.create(slug=slug, name=name)


@transaction.atomic
def add_membership(
    *,
    user: User,
    organization: Organization,
    role: Role | str,
    changed_by: User | None = None,
) -> Membership:
    """Give `user` a role in `organization`; Conflict if they already have one there."""
    _require_role(role)
    if Membership.objects.filter(user=user, organization=organization).exists():
        raise Conflict("This person already has a role in this organization.", field="user")
    membership = Membership.objects.create(user=user, organization=organization, role=role)
    _record_role_change(membership, old_role=None, new_role=role, changed_by=changed_by)
    return membership


@transaction.atomic
def remove_membership(*, membership: Membership, changed_by: User | None = None) -> None:
    """Take away the person's role in the organization (tokens stop working on their next use)."""
    deleted, _ = Membership.objects.filter(pk=membership.pk).delete()
    if deleted:
        _record_role_change(membership, old_role=membership.role, new_role=None, changed_by=changed_by)


@transaction.atomic
def record_role_change(*, membership: Membership, role: Role | str, changed_by: User) -> Membership:
    """Set a new role and write its admin log entry in the same transaction.

    The entry's change message names the old and the new role. No token is
    revoked: every tool call and every refresh re-reads the membership, so the
    change applies on the next one (docs/development/decisions.md#roles). Setting the role it
    already has changes and logs nothing.
    """
    _require_role(role)
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    old_role = locked.role
    if old_role == role:
        membership.role = old_role
        return membership
    locked.role = role
    locked.save(update_fields=["role", "updated_at"])
    LogEntry.objects.log_actions(
        user_id=changed_by.pk,
        queryset=[locked],
        action_flag=CHANGE,
        change_message=f"Role changed from {Role(old_role).value} to {Role(role).value}.",
        single_object=True,
    )
    _record_role_change(locked, old_role=old_role, new_role=role, changed_by=changed_by)
    membership.role, membership.updated_at = locked.role, locked.updated_at
    return membership


def _record_role_change(
    membership: Membership, *, old_role: str | None, new_role: str | None, changed_by: User | None
) -> None:
    # None on one side: the role was given or taken away with the membership itself.
    record_event(
        AuditAction.ROLE_CHANGE,
        person_id=membership.user_id,
        organization_id=membership.organization_id,
        actor_id=changed_by.pk if changed_by is not None else None,
        detail={"from": Role(old_role).value if old_role else None, "to": Role(new_role).value if new_role else None},
    )


def _require_role(role: str) -> None:
    if role not in Role.values:
        raise InvalidArguments("Unknown role.", field="role")
