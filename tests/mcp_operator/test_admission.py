"""Admission of operator tool calls: role re-check, organization selectors, order of checks."""

import uuid

from operator_core.errors import ErrorCode
from organizations.models import Membership, Role
from organizations.services import record_role_change, remove_membership
from tests.factories import make_membership, make_module, make_organization, make_user, token_for
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_operator.round_trips import statements


class RoleRecheckTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.module = make_module(organization=self.member.organization)
        self.token = token_for(self.member)

    def test_member_demoted_to_learner_is_forbidden_on_next_call(self) -> None:
        before = self.call_tool_with_token(self.token, "get_module", moduleId=str(self.module.id))
        record_role_change(membership=self.member, role=Role.LEARNER, changed_by=make_user())

        after = self.call_tool_with_token(self.token, "get_module", moduleId=str(self.module.id))

        self.assertIsNone(before.error_code)
        self.assertEqual(after.error_code, ErrorCode.FORBIDDEN)
        self.assertTrue(after.result["isError"])
        self.assertNotIn("module", after.structured)

    def test_removed_member_is_forbidden_on_next_call(self) -> None:
        before = self.call_tool_with_token(self.token, "list_modules")
        remove_membership(membership=self.member)

        after = self.call_tool_with_token(self.token, "list_modules")

        self.assertIsNone(before.error_code)
        self.assertEqual(after.error_code, ErrorCode.FORBIDDEN)

    def test_removed_member_gets_forbidden_as_success_false_from_a_knowledge_tool(self) -> None:
        remove_membership(membership=self.member)

        result = self.call_tool_with_token(self.token, "search_knowledge", query="anything")

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.FORBIDDEN)
        self.assertNotIn("isError", result.result)

    def test_admin_is_admitted(self) -> None:
        admin = make_membership(role=Role.ADMIN)

        result = self.call_tool(admin, "list_modules")

        self.assertIsNone(result.error_code)

    def test_requester_is_forbidden(self) -> None:
        requester = make_membership(role=Role.REQUESTER)

        result = self.call_tool(requester, "list_modules")

        self.assertEqual(result.error_code, ErrorCode.FORBIDDEN)

    def test_forbidden_comes_before_a_selector_mismatch(self) -> None:
        record_role_change(membership=self.member, role=Role.LEARNER, changed_by=make_user())

        result = self.call_tool_with_token(self.token, "list_modules", organizationSlug="elsewhere")

        self.assertEqual(result.error_code, ErrorCode.FORBIDDEN)

    def test_forbidden_comes_before_invalid_arguments(self) -> None:
        remove_membership(membership=self.member)

        result = self.call_tool_with_token(self.token, "get_module", moduleId="not-a-uuid")

        self.assertEqual(result.error_code, ErrorCode.FORBIDDEN)
        self.assertFalse(Membership.objects.filter(pk=self.member.pk).exists())


class OrganizationSelectorTests(OperatorEndpointTestCase):
    """docs/tools.md#selecting-the-organization with a token bound to acme; erin-like: admin of globex too."""

    def setUp(self) -> None:
        self.acme = make_organization(slug="acme", name="Acme")
        self.globex = make_organization(slug="globex", name="Globex")
        self.initech = make_organization(slug="initech", name="Initech")
        self.member = make_membership(role=Role.MEMBER, organization=self.acme)
        make_membership(role=Role.ADMIN, user=self.member.user, organization=self.globex)

    def call(self, **selectors: str):
        return self.call_tool(self.member, "list_modules", **selectors)

    def test_no_selector_uses_the_tokens_organization(self) -> None:
        result = self.call()

        self.assertEqual(result.structured["organization"]["slug"], "acme")

    def test_the_tokens_slug_is_accepted(self) -> None:
        self.assertIsNone(self.call(organizationSlug="acme").error_code)

    def test_the_tokens_id_is_accepted(self) -> None:
        self.assertIsNone(self.call(organizationId=str(self.acme.id)).error_code)

    def test_the_tokens_id_in_upper_case_is_accepted(self) -> None:
        self.assertIsNone(self.call(organizationId=str(self.acme.id).upper()).error_code)

    def test_the_tokens_id_and_slug_together_are_accepted(self) -> None:
        self.assertIsNone(self.call(organizationId=str(self.acme.id), organizationSlug="acme").error_code)

    def test_another_organizations_slug_is_a_scope_mismatch(self) -> None:
        result = self.call(organizationSlug="globex")

        self.assertEqual(result.error_code, ErrorCode.ORGANIZATION_SCOPE_MISMATCH)
        self.assertTrue(result.result["isError"])

    def test_another_organizations_id_is_a_scope_mismatch(self) -> None:
        self.assertEqual(
            self.call(organizationId=str(self.globex.id)).error_code, ErrorCode.ORGANIZATION_SCOPE_MISMATCH
        )

    def test_a_slug_naming_no_organization_is_the_same_scope_mismatch(self) -> None:
        known = self.call(organizationSlug="globex")

        unknown = self.call(organizationSlug="no-such-organization")

        self.assertEqual(unknown.structured, known.structured)

    def test_an_id_naming_no_organization_is_a_scope_mismatch(self) -> None:
        self.assertEqual(self.call(organizationId=str(uuid.uuid4())).error_code, ErrorCode.ORGANIZATION_SCOPE_MISMATCH)

    def test_an_id_that_is_not_a_uuid_is_a_scope_mismatch(self) -> None:
        self.assertEqual(self.call(organizationId="acme").error_code, ErrorCode.ORGANIZATION_SCOPE_MISMATCH)

    def test_id_and_slug_of_another_same_organization_are_a_scope_mismatch(self) -> None:
        result = self.call(organizationId=str(self.globex.id), organizationSlug="globex")

        self.assertEqual(result.error_code, ErrorCode.ORGANIZATION_SCOPE_MISMATCH)

    def test_the_tokens_id_with_another_slug_is_an_invalid_selector(self) -> None:
        result = self.call(organizationId=str(self.acme.id), organizationSlug="globex")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ORGANIZATION_SELECTOR)
        self.assertTrue(result.result["isError"])

    def test_the_tokens_slug_with_another_id_is_an_invalid_selector(self) -> None:
        result = self.call(organizationId=str(self.globex.id), organizationSlug="acme")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ORGANIZATION_SELECTOR)

    def test_id_and_slug_of_two_other_organizations_are_an_invalid_selector(self) -> None:
        result = self.call(organizationId=str(self.globex.id), organizationSlug="initech")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ORGANIZATION_SELECTOR)

    def test_the_tokens_id_with_a_slug_naming_nothing_is_an_invalid_selector(self) -> None:
        result = self.call(organizationId=str(self.acme.id), organizationSlug="no-such-organization")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ORGANIZATION_SELECTOR)

    def test_a_selector_that_is_not_a_string_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", organizationSlug=7)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "organizationSlug")

    def test_a_knowledge_tool_reports_a_scope_mismatch_as_success_false(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="helmets", organizationSlug="globex")

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.ORGANIZATION_SCOPE_MISMATCH)

    def test_a_selector_naming_the_tokens_organization_reads_only_the_membership(self) -> None:
        # the person with their membership and organization (read first: the slug is judged against it), the
        # modules, the audit record (on PostgreSQL a CTE of the modules' read): the selector costs nothing more
        with self.assertNumQueries(statements(reads=1, access_apart=True)):
            self.call(organizationId=str(self.acme.id), organizationSlug="acme")
