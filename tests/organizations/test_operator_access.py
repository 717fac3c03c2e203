"""One query reads whether a person may act as an operator in an organization, and which it is."""

from django.test import TestCase

from organizations.models import Role
from organizations.operator_access import operator_access_or_none
from tests.factories import make_membership, make_organization, make_user


class OperatorAccessTests(TestCase):
    def test_admin_and_member_get_their_organization(self) -> None:
        for role in (Role.ADMIN, Role.MEMBER):
            membership = make_membership(role=role)

            access = operator_access_or_none(user_id=membership.user_id, organization_id=membership.organization_id)

            self.assertTrue(access.is_active)
            self.assertEqual(access.organization, membership.organization)
            self.assertEqual(access.organization.slug, membership.organization.slug)
            self.assertEqual(access.organization.name, membership.organization.name)

    def test_learner_requester_other_organization_and_malformed_id_get_none(self) -> None:
        learner = make_membership(role=Role.LEARNER)
        requester = make_membership(role=Role.REQUESTER)
        member = make_membership(role=Role.MEMBER)

        for user_id, organization_id in (
            (learner.user_id, learner.organization_id),
            (requester.user_id, requester.organization_id),
            (member.user_id, make_organization().id),
            (member.user_id, "nope"),
        ):
            access = operator_access_or_none(user_id=user_id, organization_id=organization_id)
            self.assertIsNone(access.organization)
            self.assertTrue(access.is_active)

    def test_inactive_person_is_reported_inactive(self) -> None:
        membership = make_membership(user=make_user(is_active=False))

        access = operator_access_or_none(user_id=membership.user_id, organization_id=membership.organization_id)

        self.assertFalse(access.is_active)

    def test_unknown_person_gets_none(self) -> None:
        self.assertIsNone(operator_access_or_none(user_id=987654, organization_id=make_organization().id))

    def test_it_costs_one_query(self) -> None:
        membership = make_membership()
        with self.assertNumQueries(1):
            operator_access_or_none(user_id=membership.user_id, organization_id=str(membership.organization_id))
