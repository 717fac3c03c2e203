from django.test import TestCase

from operator_core.errors import ErrorCode
from organizations.errors import IneligibleOrganization, NoEligibleOrganization, OrganizationChoiceRequired
from organizations.models import Role
from organizations.selectors import (
    eligible_organizations,
    organization_by_id_or_none,
    organization_by_slug_or_none,
    require_eligible_organization,
)
from tests.factories import make_membership, make_organization, make_user


class OrganizationLookupTests(TestCase):
    def test_malformed_or_missing_ids_give_none(self) -> None:
        organization = make_organization()

        self.assertEqual(organization_by_id_or_none(str(organization.id)), organization)
        self.assertIsNone(organization_by_id_or_none("not-a-uuid"))
        self.assertIsNone(organization_by_id_or_none("00000000-0000-0000-0000-000000000000"))

    def test_slug_lookup(self) -> None:
        organization = make_organization(slug="acme-test")

        self.assertEqual(organization_by_slug_or_none("acme-test"), organization)
        self.assertIsNone(organization_by_slug_or_none("nobody"))


class EligibleOrganizationsTests(TestCase):
    def test_only_admin_and_member_roles_count_and_names_order_them(self) -> None:
        user = make_user()
        zeta = make_membership(user=user, role=Role.ADMIN, organization=make_organization(name="Zeta")).organization
        alpha = make_membership(user=user, role=Role.MEMBER, organization=make_organization(name="Alpha")).organization
        make_membership(user=user, role=Role.LEARNER)
        make_membership(user=user, role=Role.REQUESTER)
        make_membership(role=Role.ADMIN)  # someone else's organization

        self.assertEqual(list(eligible_organizations(user)), [alpha, zeta])


class RequireEligibleOrganizationTests(TestCase):
    def test_the_only_eligible_organization_needs_no_choice(self) -> None:
        membership = make_membership(role=Role.MEMBER)

        for organization_id in (None, ""):
            chosen = require_eligible_organization(membership.user, organization_id=organization_id)

            self.assertEqual(chosen, membership.organization)

    def test_a_choice_among_several_must_be_eligible(self) -> None:
        user = make_user()
        alpha = make_membership(user=user, role=Role.ADMIN, organization=make_organization(name="Alpha")).organization
        beta = make_membership(user=user, role=Role.MEMBER, organization=make_organization(name="Beta")).organization
        learner_of = make_membership(user=user, role=Role.LEARNER).organization

        self.assertEqual(require_eligible_organization(user, organization_id=str(beta.id)), beta)
        with self.assertRaises(OrganizationChoiceRequired) as missing:
            require_eligible_organization(user, organization_id=None)
        self.assertEqual(missing.exception.eligible, [alpha, beta])
        with self.assertRaises(IneligibleOrganization) as foreign:
            require_eligible_organization(user, organization_id=str(learner_of.id))
        self.assertEqual(foreign.exception.eligible, [alpha, beta])

    def test_no_admin_or_member_role_is_forbidden(self) -> None:
        user = make_membership(role=Role.LEARNER).user

        with self.assertRaises(NoEligibleOrganization) as raised:
            require_eligible_organization(user, organization_id=None)

        self.assertEqual(raised.exception.code, ErrorCode.FORBIDDEN)
