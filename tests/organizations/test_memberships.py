from django.contrib.admin.models import CHANGE, LogEntry
from django.db import IntegrityError, transaction
from django.test import TestCase

from audit.models import AuditAction, AuditEvent
from operator_core.errors import ErrorCode, InvalidArguments, OperatorError
from organizations.models import Membership, Role
from organizations.services import add_membership, record_role_change, remove_membership
from tests.audit.support import only_event
from tests.factories import make_membership, make_organization, make_user


class MembershipConstraintTests(TestCase):
    def test_a_person_has_at_most_one_membership_per_organization(self) -> None:
        membership = make_membership(role=Role.MEMBER)

        with self.assertRaises(IntegrityError), transaction.atomic():
            Membership.objects.create(user=membership.user, organization=membership.organization, role=Role.ADMIN)

        self.assertEqual(Membership.objects.count(), 1)

    def test_an_unknown_role_is_refused_by_the_database(self) -> None:
        with self.assertRaises(IntegrityError), transaction.atomic():
            Membership.objects.create(user=make_user(), organization=make_organization(), role="owner")

        self.assertEqual(Membership.objects.count(), 0)

    def test_the_same_person_may_hold_roles_in_two_organizations(self) -> None:
        first = make_membership(role=Role.MEMBER)

        second = add_membership(user=first.user, organization=make_organization(), role=Role.ADMIN)

        self.assertEqual(Membership.objects.filter(user=first.user).count(), 2)
        self.assertEqual(second.role, Role.ADMIN)


class AddMembershipTests(TestCase):
    def test_second_membership_in_the_same_organization_is_a_conflict(self) -> None:
        membership = make_membership(role=Role.LEARNER)

        with self.assertRaises(OperatorError) as caught:
            add_membership(user=membership.user, organization=membership.organization, role=Role.ADMIN)

        self.assertEqual(caught.exception.code, ErrorCode.CONFLICT)
        membership.refresh_from_db()
        self.assertEqual(membership.role, Role.LEARNER)

    def test_unknown_role_is_invalid(self) -> None:
        with self.assertRaises(InvalidArguments) as caught:
            add_membership(user=make_user(), organization=make_organization(), role="owner")

        self.assertEqual(caught.exception.data, {"field": "role"})
        self.assertEqual(Membership.objects.count(), 0)


class RecordRoleChangeTests(TestCase):
    def test_changes_the_role_and_logs_old_and_new_role(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        staff = make_user(is_staff=True)

        record_role_change(membership=membership, role=Role.LEARNER, changed_by=staff)

        membership.refresh_from_db()
        self.assertEqual(membership.role, Role.LEARNER)
        entry = LogEntry.objects.get()
        self.assertEqual((entry.user_id, entry.action_flag, entry.object_id), (staff.pk, CHANGE, str(membership.pk)))
        self.assertEqual(entry.get_change_message(), "Role changed from member to learner.")

    def test_setting_the_same_role_logs_nothing(self) -> None:
        membership = make_membership(role=Role.ADMIN)

        record_role_change(membership=membership, role=Role.ADMIN, changed_by=make_user())

        self.assertEqual(LogEntry.objects.count(), 0)

    def test_unknown_role_changes_nothing(self) -> None:
        membership = make_membership(role=Role.MEMBER)

        with self.assertRaises(InvalidArguments) as caught:
            record_role_change(membership=membership, role="owner", changed_by=make_user())

        self.assertEqual(caught.exception.code, ErrorCode.INVALID_ARGUMENTS)
        membership.refresh_from_db()
        self.assertEqual(membership.role, Role.MEMBER)
        self.assertEqual(LogEntry.objects.count(), 0)


class RemoveMembershipTests(TestCase):
    def test_removes_only_that_membership(self) -> None:
        membership = make_membership()
        other = make_membership(user=membership.user)

        remove_membership(membership=membership)

        self.assertEqual(list(Membership.objects.all()), [other])


class RoleChangeRecordTests(TestCase):
    def test_a_role_change_records_the_person_the_organization_both_roles_and_who_changed_it(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        staff = make_user(is_staff=True)

        record_role_change(membership=membership, role=Role.LEARNER, changed_by=staff)

        event = only_event(self, action=AuditAction.ROLE_CHANGE)
        self.assertEqual((event.person_id, event.organization_id), (membership.user_id, membership.organization_id))
        self.assertEqual(event.actor_id, staff.pk)
        self.assertEqual(event.detail, {"from": "member", "to": "learner"})

    def test_setting_the_same_role_records_nothing(self) -> None:
        membership = make_membership(role=Role.ADMIN)

        record_role_change(membership=membership, role=Role.ADMIN, changed_by=make_user())

        self.assertFalse(AuditEvent.objects.exists())

    def test_a_role_given_and_taken_away_is_recorded_from_and_to_nothing(self) -> None:
        staff = make_user(is_staff=True)
        membership = add_membership(
            user=make_user(), organization=make_organization(), role=Role.ADMIN, changed_by=staff
        )

        remove_membership(membership=membership, changed_by=staff)

        details = list(AuditEvent.objects.order_by("id").values_list("detail", flat=True))
        self.assertEqual(details, [{"from": None, "to": "admin"}, {"from": "admin", "to": None}])
